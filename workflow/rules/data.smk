# Food-101 (downloaded, or generated with the same layout) -> extracted images -> DALI file lists.


if config["dataset"]["source"] == "food101":

    rule download:
        output:
            ARCHIVE,
        log:
            f"{DATA}/logs/download.log",
        conda:
            "../../envs/data.yaml"
        params:
            url=config["dataset"]["url"],
            sha256=config["dataset"]["sha256"],
        script:
            "../scripts/download.py"

else:

    rule make_synthetic:
        output:
            ARCHIVE,
        log:
            f"{DATA}/logs/make_synthetic.log",
        conda:
            "../../envs/data.yaml"
        # a function, read per job: commands without --cores (--report) still load
        threads: lambda wildcards: workflow.cores
        params:
            synthetic=config["dataset"]["synthetic"],
        script:
            "../scripts/make_synthetic.py"


rule extract:
    input:
        ARCHIVE,
    output:
        directory(f"{DATA}/food-101"),
    log:
        f"{DATA}/logs/extract.log",
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/extract.py"


rule filelists:
    input:
        f"{DATA}/food-101",
    output:
        **{split: f"{DATA}/filelists/{split}.txt" for split in ["train", "test", "all"]},
        classes=f"{DATA}/filelists/classes.txt",
        report=f"{DATA}/filelists/report.json",
    log:
        f"{DATA}/logs/filelists.log",
    conda:
        "../../envs/data.yaml"
    # a function, read per job: commands without --cores (--report) still load
    threads: lambda wildcards: workflow.cores
    params:
        on_bad_image=config["dataset"]["on_bad_image"],
    script:
        "../scripts/filelists.py"

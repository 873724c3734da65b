# One training job per compile mode. `gpu=1` and the default workflow profile's `gpu: 1` keep two
# training jobs from ever running at once, so no timing is shared with another job.


rule train:
    input:
        filelist=f"{DATA}/filelists/{config['dataset']['split']}.txt",
        images=f"{DATA}/food-101",
    output:
        csv=f"{RESULTS}/timings/{{mode}}.csv",
        json=f"{RESULTS}/timings/{{mode}}.json",
    log:
        f"{RESULTS}/logs/train/{{mode}}.log",
    conda:
        "../../envs/train.yaml"
    resources:
        gpu=1,
    params:
        train=config["train"],
        loader=config["loader"],
        compile=lambda wildcards: compile_settings(wildcards.mode),
    script:
        "../scripts/train.py"

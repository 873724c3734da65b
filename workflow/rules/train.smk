# One training job per compile mode and repeat. `gpu=1` and the default workflow profile's `gpu: 1`
# keep two training jobs from ever running at once, so no timing is shared with another job.


wildcard_constraints:
    repeat=r"[2-9]|[1-9][0-9]+",


rule train:
    input:
        filelist=f"{DATA}/filelists/{config['dataset']['split']}.txt",
        images=f"{DATA}/food-101",
    output:
        csv=report(
            f"{RESULTS}/timings/{{mode}}.csv",
            caption="../report/timings.rst",
            category="Timings per job",
            labels={"mode": "{mode}", "repeat": "1", "file": "epochs (CSV)"},
        ),
        json=report(
            f"{RESULTS}/timings/{{mode}}.json",
            caption="../report/timings.rst",
            category="Timings per job",
            labels={"mode": "{mode}", "repeat": "1", "file": "facts (JSON)"},
        ),
    log:
        f"{RESULTS}/logs/train/{{mode}}.log",
    conda:
        "../../envs/train.yaml"
    resources:
        gpu=1,
    params:
        # without `repeats`: how many jobs run is not what one job computes, so raising it must not
        # rerun the repeats that exist
        train={k: v for k, v in config["train"].items() if k != "repeats"},
        loader=config["loader"],
        compile=lambda wildcards: compile_settings(wildcards.mode),
    script:
        "../scripts/train.py"


# Repeats 2..N: the same job under other names; repeat 1 keeps the names results had before repeats.
use rule train as train_repeat with:
    output:
        csv=report(
            f"{RESULTS}/timings/{{mode}}.rep{{repeat}}.csv",
            caption="../report/timings.rst",
            category="Timings per job",
            labels={"mode": "{mode}", "repeat": "{repeat}", "file": "epochs (CSV)"},
        ),
        json=report(
            f"{RESULTS}/timings/{{mode}}.rep{{repeat}}.json",
            caption="../report/timings.rst",
            category="Timings per job",
            labels={"mode": "{mode}", "repeat": "{repeat}", "file": "facts (JSON)"},
        ),
    log:
        f"{RESULTS}/logs/train/{{mode}}.rep{{repeat}}.log",

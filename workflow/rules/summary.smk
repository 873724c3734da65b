# All modes' timings -> summary table (CSV, Markdown) and plots.


rule summary:
    input:
        csv=timing_outputs("csv"),
        json=timing_outputs("json"),
    output:
        csv=f"{RESULTS}/summary.csv",
        md=f"{RESULTS}/summary.md",
    log:
        f"{RESULTS}/logs/summary.log",
    params:
        baseline="none",
        run=RUN,
        dataset_note=dataset_note(),
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/summarize.py"


rule plots:
    input:
        summary=f"{RESULTS}/summary.csv",
        csv=timing_outputs("csv"),
        json=timing_outputs("json"),
    output:
        **{
            f"{plot}_{ext}": f"{RESULTS}/plots/{plot}.{ext}"
            for plot in PLOTS
            for ext in ["png", "svg"]
        },
    log:
        f"{RESULTS}/logs/plots.log",
    params:
        baseline="none",
        run=RUN,
        device_note=device_note(),
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/plot.py"

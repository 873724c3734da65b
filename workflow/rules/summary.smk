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
    conda:
        "../../envs/plot.yaml"
    params:
        baseline="none",
        run=RUN,
        dataset_note=dataset_note(),
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
    conda:
        "../../envs/plot.yaml"
    params:
        baseline="none",
        run=RUN,
        device_note=device_note(),
    script:
        "../scripts/plot.py"

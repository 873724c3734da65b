# All modes' timings -> summary table (CSV, Markdown), plots, and this run beside the article.

# The article's published epoch times and setup (RTX 3090, PyTorch 2.1.0), kept in the repository.
ARTICLE_TIMES = "docs/article/epoch_times.csv"
# Report category of each plot of the plots rule: one category per kind of result.
PLOT_CATEGORIES = {
    "epoch_times": "Epoch times",
    "speedup": "Speedup",
    "loss": "Training loss",
}


rule summary:
    input:
        csv=timing_outputs("csv"),
        json=timing_outputs("json"),
        article=ARTICLE_TIMES,
    output:
        csv=report(
            f"{RESULTS}/summary.csv",
            caption="../report/summary.rst",
            category="Summary",
            labels={"table": "per mode (CSV)"},
        ),
        md=report(
            f"{RESULTS}/summary.md",
            caption="../report/summary.rst",
            category="Summary",
            labels={"table": "per mode, with the article (Markdown)"},
        ),
        repeats=report(
            f"{RESULTS}/repeats.csv",
            caption="../report/repeats.rst",
            category="Summary",
            labels={"table": "per training job (CSV)"},
        ),
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
        repeats=f"{RESULTS}/repeats.csv",
        csv=timing_outputs("csv"),
        json=timing_outputs("json"),
    output:
        **{
            f"{plot}_{ext}": report(
                f"{RESULTS}/plots/{plot}.{ext}",
                caption=f"../report/{plot}.rst",
                category=PLOT_CATEGORIES[plot],
                labels={"format": ext.upper()},
            )
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


rule vs_article:
    input:
        summary=f"{RESULTS}/summary.csv",
        json=timing_outputs("json"),
        article=ARTICLE_TIMES,
    output:
        png=report(
            f"{RESULTS}/plots/vs_article.png",
            caption="../report/vs_article.rst",
            category="Article comparison",
            labels={"format": "PNG"},
        ),
        svg=report(
            f"{RESULTS}/plots/vs_article.svg",
            caption="../report/vs_article.rst",
            category="Article comparison",
            labels={"format": "SVG"},
        ),
    log:
        f"{RESULTS}/logs/vs_article.log",
    conda:
        "../../envs/plot.yaml"
    params:
        baseline="none",
        run=RUN,
        device_note=device_note(),
    script:
        "../scripts/vs_article.py"

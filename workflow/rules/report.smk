# What a paper cites: the run's provenance (part of `all`), the Snakemake report and one archive of
# everything (`snakemake --cores 1 archive`).
import sys
from pathlib import Path

from snakemake import __version__ as SNAKEMAKE_VERSION

# The environment files of the rules, archived so the software can be rebuilt.
ENV_FILES = sorted(str(p) for p in Path(workflow.basedir, "envs").glob("*.yaml")) + [
    str(p) for p in [Path(workflow.basedir, "requirements.txt")] if p.exists()
]


rule provenance:
    input:
        json=timing_outputs("json"),
        filelists_report=rules.filelists.output.report,
    output:
        json=report(
            f"{RESULTS}/provenance.json",
            caption="../report/provenance.rst",
            category="Provenance",
            labels={"file": "provenance (JSON)"},
        ),
        md=report(
            f"{RESULTS}/provenance.md",
            caption="../report/provenance.rst",
            category="Provenance",
            labels={"file": "provenance (Markdown)"},
        ),
        config=report(
            f"{RESULTS}/config.yaml",
            caption="../report/provenance.rst",
            category="Provenance",
            labels={"file": "resolved config (YAML)"},
        ),
    log:
        f"{RESULTS}/logs/provenance.log",
    # the training environment: its package list is the one the timings ran with
    conda:
        "../../envs/train.yaml"
    params:
        run=RUN,
        config=config,
        workflow_dir=workflow.basedir,
        snakemake_version=SNAKEMAKE_VERSION,
    script:
        "../scripts/provenance.py"


# `snakemake --report` run for this run's resolved config, so the archive always holds a fresh one.
rule report:
    input:
        summary_outputs(),
        config=f"{RESULTS}/config.yaml",
    output:
        f"{RESULTS}/report.zip",
    log:
        f"{RESULTS}/logs/report.log",
    localrule: True
    params:
        snakefile=workflow.main_snakefile,
    run:
        shell(
            "{sys.executable} -m snakemake --snakefile {params.snakefile:q} --cores 1 "
            "--configfile {input.config:q} --report {output:q} > {log:q} 2>&1"
        )


rule archive:
    input:
        results=[
            *summary_outputs(),
            *timing_outputs("csv"),
            *timing_outputs("json"),
            f"{RESULTS}/config.yaml",
            f"{RESULTS}/report.zip",
        ],
        envs=ENV_FILES,
        article=ARTICLE_TIMES,
        filelists_report=rules.filelists.output.report,
    output:
        tar=f"results/{RUN}.tar.gz",
        sha256=f"results/{RUN}.tar.gz.sha256",
    log:
        f"{RESULTS}/logs/archive.log",
    localrule: True
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/archive.py"

# What torch.compile buys for real training: Food-101 -> DALI file lists -> one ResNet50 training
# job per compile mode -> timing CSVs -> summary table and plots, provenance; on request the
# Snakemake report and an archive of the run (`snakemake --cores 1 archive`). See README.md.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/summary.smk"
include: "workflow/rules/partial_summary.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        summary_outputs(),


# A training job failed (with --keep-going the other modes still ran): summarise the modes that
# finished and mark the others (workflow/rules/partial_summary.smk).
onerror:
    write_partial_summary()

# The summary of the modes that finished when others failed: run by the workflow's `onerror` hook.
import os
import sys
from pathlib import Path

# --keep-going with a training job that failed (out of GPU memory, a compile error): Snakemake runs
# every other job it can, but not the summary, which needs every mode. The workflow's `onerror`
# hook (Snakefile) then calls this function, which writes summary.csv and summary.md from the jobs
# that finished and marks each mode without results (status, log, error), and Snakemake still
# exits non-zero. The next run redoes that summary: the hook deletes the summary job's repeats.csv,
# and a job with a missing output always runs again (the CSV and Markdown alone could look up to
# date, e.g. once the failed mode is removed from the config). The plots of the earlier summary are
# deleted too, so that no folder mixes them with this one.
TRAIN_RULES = {"train", "train_repeat"}
SUMMARY_RULES = {"summary", "plots", "vs_article"}


def write_partial_summary():
    """onerror hook: the partial summary, when the summary was due and some training jobs failed."""
    from snakemake.logging import logger

    try:
        written = _write_partial_summary(logger)
    except Exception as err:  # the run's own error must stay what the user sees
        logger.warning(f"No partial summary: {type(err).__name__}: {err}")
        return
    if written:
        logger.warning(written)


def _training_jobs_state():
    """Per training job (mode, repeat, csv, json, log) the state of its results after this run: ok
    (up to date or made now), failed, or not run (outdated or missing, and never started).
    """
    dag = workflow.dag
    failed = set(getattr(workflow.scheduler, "failed", ()))
    by_output = {
        str(job.output[0]): job for job in dag.jobs if job.rule.name in TRAIN_RULES
    }
    states = []
    for mode in MODES:
        for repeat in range(1, config["train"]["repeats"] + 1):
            stem = f"{mode}{repeat_suffix(repeat)}"
            csv, json = (
                f"{RESULTS}/timings/{stem}.csv",
                f"{RESULTS}/timings/{stem}.json",
            )
            job = by_output.get(csv)
            if job is not None and job in failed:
                state = "failed"
            elif (job is None or dag.noneedrun_finished(job)) and all(
                os.path.exists(f) for f in (csv, json)
            ):
                state = "ok"
            else:
                state = "not run"
            log = f"{RESULTS}/logs/train/{stem}.log"
            states.append((mode, repeat, csv, json, log, state))
    return states


def _write_partial_summary(logger):
    dag = workflow.dag
    due = [
        job
        for job in dag.jobs
        if job.rule.name == "summary" and not dag.noneedrun_finished(job)
    ]
    if not due:  # not asked for, or made: the failure was elsewhere
        return None
    states = _training_jobs_state()
    ok = [s for s in states if s[-1] == "ok"]
    if len(ok) == len(states):  # every mode has results: the summary itself failed
        return None
    if not ok:
        return "No partial summary: no training job finished."
    sys.path.insert(0, os.path.join(workflow.basedir, "workflow", "scripts"))
    import summarize

    missing = [
        summarize.MissingJob(mode, repeat, state, log)
        for mode, repeat, _, _, log, state in states
        if state != "ok"
    ]
    for job in dag.jobs:  # outputs of the summary's jobs that no longer match it
        if job.rule.name in SUMMARY_RULES and not dag.noneedrun_finished(job):
            for path in job.output:
                if os.path.basename(path) not in ("summary.csv", "summary.md"):
                    Path(path).unlink(missing_ok=True)
    out = rules.summary.output
    summarize.main(
        [s[2] for s in ok],
        [s[3] for s in ok],
        out.csv,
        out.md,
        baseline=rules.summary.params.baseline,
        run_name=RUN,
        dataset_note=dataset_note(),
        article_csv=ARTICLE_TIMES,
        missing=missing,
        mode_order=MODES,
    )
    failed = [j for j in missing if j.status == "failed"]
    names = ", ".join(
        f"{j.mode}{'' if j.repeat == 1 else f' repeat {j.repeat}'} ({j.log})"
        for j in failed
    )
    return (
        f"Partial summary in {out.md} and {out.csv}: {len(ok)} of {len(states)} training jobs "
        f"finished; marked as failed: {names or 'none'}"
        + (
            f"; not run: {len(missing) - len(failed)}"
            if len(missing) > len(failed)
            else ""
        )
        + ". Fix the cause and run Snakemake again for the complete summary."
    )

"""The plan of a scale (neurips26.common.plan, costs; rule plan): totals, the longest chain, rates and flags on a
hand-made DAG, and the paper-scale plan of the workflow itself."""

from __future__ import annotations

import math
import re

import pytest

from neurips26.common.costs import decoder_params, decoder_work
from neurips26.common.plan import JobRecord, downloads_table, longest_chain, rates, render_plan, rules_table, totals


def job(jobid, rule, runtime, deps=(), threads=1, gpus=0, work=None, seconds=None, download=None, size=None):
    return JobRecord(
        jobid=jobid,
        rule=rule,
        paper=rule.split("_")[0],
        threads=threads,
        runtime_min=runtime,
        mem_mb=1000,
        gpus=gpus,
        deps=tuple(deps),
        work=work,
        seconds=seconds,
        download=download,
        size=size,
    )


# a diamond and a tail: 0 -> {1, 2} -> 3 -> 4, with 2 the long branch; 5 is independent
DAG = [
    job(0, "download", 60, download="p/a.bin", size=2_000_000_000),
    job(1, "p_prepare", 10, deps=[0], threads=2),
    job(2, "p_train", 600, deps=[0], threads=4, gpus=1, work=4e12),
    job(3, "p_evaluate", 30, deps=[1, 2]),
    job(4, "p_report", 5, deps=[3]),
    job(5, "q_train", 100, threads=4, gpus=1, work=1e9),
    job(6, "download", 60, download="p/b.bin"),
]


def test_totals_count_threads_and_gpus_times_requested_runtime():
    t = totals(DAG)
    assert t["jobs"] == 7
    assert t["cpu_hours"] == pytest.approx((60 + 20 + 2400 + 30 + 5 + 400 + 60) / 60)
    assert t["gpu_hours"] == pytest.approx((600 + 100) / 60)
    assert (t["downloads"], t["download_gb_stated"], t["downloads_without_size"]) == (2, 2.0, 1)


def test_the_longest_chain_follows_the_longest_branch_of_the_diamond():
    minutes, chain = longest_chain(DAG)
    assert minutes == 60 + 600 + 30 + 5
    assert [j.jobid for j in chain] == [0, 2, 3, 4]


def test_a_deep_chain_does_not_hit_the_recursion_limit():
    deep = [job(0, "p_a", 1)] + [job(i, "p_a", 1, deps=[i - 1]) for i in range(1, 5000)]
    minutes, chain = longest_chain(deep)
    assert minutes == 5000 and len(chain) == 5000


def test_rates_and_estimates_flag_a_request_below_the_estimate_on_the_right_device():
    measured = [job(10, "p_train", 5, work=1e9, seconds=100.0), job(11, "p_train", 5, work=3e9, seconds=300.0)]
    rate = rates(measured + [job(12, "q_train", 5, work=1e9)])  # no measured time: no rate
    assert rate == {"p_train": pytest.approx(1e7)}
    cpu = [*DAG, job(7, "p_fit", 60, work=3e10), job(8, "p_fit", 60, work=6e10)]
    rate["p_fit"] = 1e7  # 3e10 / 1e7 = 50 min (inside 60), 6e10 / 1e7 = 100 min (past it)
    table = rules_table(cpu, rate).set_index("rule")
    assert table.loc["p_fit", "estimated min/job (max)"] == pytest.approx(100.0)
    assert table.loc["p_fit", "jobs past their request"] == 1 and table.loc["p_fit", "rate measured"] == "CPU, quick"
    # a GPU job is not estimated from a CPU rate, only from one recorded on a GPU
    assert math.isnan(table.loc["p_train", "estimated min/job (max)"]) and table.loc["p_train", "rate measured"] == ""
    on_gpu = rules_table(cpu, rate, gpu_rate={"p_train": 1e9}).set_index("rule")
    assert on_gpu.loc["p_train", "estimated min/job (max)"] == pytest.approx(4e12 / 1e9 / 60)  # 66.7 min < 600
    assert on_gpu.loc["p_train", "jobs past their request"] == 0
    assert list(table.index[:2]) == ["p_train", "q_train"]  # GPU-hours first
    text = render_plan("Plan", cpu, rate)
    flagged = text.split("## Requests that look too small")[1].split("##")[0]
    assert "p_fit" in flagged and "p_train" not in flagged and "q_train" not in flagged


def test_downloads_are_grouped_by_folder_with_stated_sizes():
    table = downloads_table(DAG)
    assert table.to_dict("records") == [{"folder": "p", "files": 2, "GB stated": 2.0, "files without a stated size": 1}]


def test_decoder_work_counts_attention_mlp_and_head_weights():
    # one layer, d=4, 2 heads of 2, 1 kv head of 2, d_ff 8, vocab 10: q,o 2*4*4; k,v 2*4*2; mlp 3*4*8; head 4*10
    assert decoder_params(4, 1, 2, 1, 2, 8, 10) == 32 + 16 + 96 + 40
    assert decoder_params(4, 1, 2, 1, 2, 8, 10, active_experts=2) == 32 + 16 + 192 + 40
    assert decoder_work(100, d_model=4, n_layers=1, n_heads=2, n_kv_heads=1, head_dim=2, d_ff=8, vocab=10) == 18400


def test_every_paper_plans_at_paper_scale_without_refusal():
    from conftest import PAPERS, ROOT, planned_jobs

    jobs = planned_jobs(ROOT, "results/paper/REPORT.md")
    assert all(jobs.get(f"{slug}_report") == 1 for slug in PAPERS), jobs
    assert jobs.get("download", 0) >= 20  # the locked sources included (FineWeb-Edu shards, Toys, ChEMBL, TDC)


def test_the_plan_rule_writes_the_plan_of_a_scale(workflow_copy):
    from conftest import snakemake

    # anadiffusion: its ADNI folder is unset in the shipped config; a real run stops on that, the plan goes on
    papers = "papers=[thresh_mcts, fairness_audit, anadiffusion]"
    snakemake(workflow_copy, "-c1", "results/paper/PLAN.md", "--config", papers)
    text = (workflow_copy / "results/paper/PLAN.md").read_text()
    assert "# Plan of the paper scale: all papers" in text and "## The longest chain" in text
    assert "anadiffusion_adni" in text
    jobs = int(re.search(r"\*\*(\d+) jobs\*\*", text).group(1))
    assert jobs > 100 and "fairness_audit_true_bias" in text and "thresh_mcts_report" in text
    # the rule's paper-scale request (2880 min, raised from 240 after reading the plan; 1 thread)
    row = next(line for line in text.splitlines() if line.startswith("| fairness_audit_true_bias |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    jobs_tb, minutes, cpu_h = int(cells[2]), float(cells[4]), float(cells[5])
    assert minutes == 2880 and cpu_h == pytest.approx(jobs_tb * 2880 / 60, rel=5e-3)  # 3 significant digits
    own = (workflow_copy / "results/paper/thresh_mcts/PLAN.md").read_text()
    assert "fairness_audit" not in own and int(re.search(r"\*\*(\d+) jobs\*\*", own).group(1)) < jobs

"""The evaluation harness: metrics on a hand-made fixture, loaders, runs, reports, CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trustnode.audit.computer import ComputerAuditor
from trustnode.audit.evaluation import AuditorKind, EvalError, EvalFormat, TraceRow, compute, load, run
from trustnode.audit.evaluation import modes as modes_mod
from trustnode.audit.evaluation import runner as runner_mod
from trustnode.audit.evaluation.datasets import DatasetError, EvalItem
from trustnode.audit.evaluation.modes import _hdag_function, run_hdag, run_per_step, step_tasks
from trustnode.audit.evaluation.report import markdown, write
from trustnode.audit.evaluation.suspect import flag_refuted_labels
from trustnode.cli.main import app
from trustnode.models.enums import Level, Relationship
from trustnode.models.hdag import HDAG


def row(label: int, predicted: int, decided: bool = True) -> TraceRow:
    return TraceRow(id=f"t{label}{predicted}", label=label, predicted=predicted, decided=decided)


def test_metrics_on_a_hand_computed_fixture() -> None:
    rows = [
        row(2, 2),  # exact
        row(1, 1),  # exact
        row(3, 1),  # early
        row(0, -1, decided=False),  # missed
        row(2, 4),  # late
        row(-1, -1),  # clean
        row(-1, -1, decided=False),  # clean
        row(-1, 0),  # false alarm
    ]
    m = compute(rows)
    # erroneous: 5 traces, 2 exact -> acc_err = 2/5 = 0.4
    # correct: 3 traces, 2 clean -> acc_ok = 2/3
    # F1 = 2 * 0.4 * (2/3) / (0.4 + 2/3) = (8/15) / (16/15) = 0.5
    # exact first error over all = (2 exact + 2 clean) / 8 = 0.5; false alarms 1 of 3
    # coverage = 6 decided / 8 = 0.75
    assert (m.n, m.n_erroneous, m.n_correct) == (8, 5, 3)
    assert m.accuracy_erroneous == pytest.approx(0.4)
    assert m.accuracy_correct == pytest.approx(2 / 3)
    assert m.f1 == pytest.approx(0.5)
    assert m.exact_first_error_accuracy == pytest.approx(0.5)
    assert m.false_alarms == 1 and m.false_alarm_rate == pytest.approx(1 / 3)
    assert m.coverage == pytest.approx(0.75)
    c = m.confusion
    assert (c.exact, c.early, c.late, c.missed, c.clean, c.false_alarm) == (2, 1, 1, 1, 2, 1)


def test_metrics_edge_cases() -> None:
    only_clean = compute([row(-1, -1)])
    assert only_clean.accuracy_erroneous is None and only_clean.f1 is None
    all_wrong = compute([row(1, -1), row(-1, 0)])
    assert all_wrong.f1 == 0.0


# -- loaders ---------------------------------------------------------------------------------

BBM_LINES = [
    {
        "input": "((2 + 3) * (4 - 1)) =",
        "steps": [
            'This equation can be written as "A * B", where A = (2 + 3) and B = (4 - 1).',
            "Let's calculate A = (2 + 3) = 6.",
            "Let's calculate B = (4 - 1) = 3.",
            "Then, the final equation is A * B = 6 * 3 = 18. So the answer is 18",
        ],
        "answer": "18",
        "target": "15",
        "mistake_index": 1,
    },
    {
        "input": "((2 + 3) * (4 - 1)) =",
        "steps": [
            'This equation can be written as "A * B", where A = (2 + 3) and B = (4 - 1).',
            "Let's calculate A = (2 + 3) = 5.",
            "Let's calculate B = (4 - 1) = 3.",
            "Then, the final equation is A * B = 5 * 3 = 15. So the answer is 15",
        ],
        "answer": "15",
        "target": "15",
        "mistake_index": None,
    },
    {
        "input": "(1 + 1) =",
        "steps": ["Let's calculate (1 + 1) = 2. So the answer is 2"],
        "answer": "2",
        "target": "3",
        "mistake_index": None,
    },
    {
        "input": "((1 + 2) * 4) =",
        "steps": [
            'This equation can be written as "A * 4", where A = (1 + 2).',
            "Let's calculate A = (1 + 2) = 3.",
            "Then, the final equation is A * 4 = 3 * 4 = 13. So the answer is 13",
        ],
        "answer": "13",
        "target": "12",
        "mistake_index": 2,
    },
]


@pytest.fixture
def bbm_file(tmp_path: Path) -> Path:
    p = tmp_path / "bbm.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in BBM_LINES) + "\n", encoding="utf-8")
    return p


def test_bbm_loader_flags_suspect_labels(bbm_file: Path) -> None:
    items = load(bbm_file, EvalFormat.BBM).items
    assert [i.label for i in items] == [1, -1, -1, 2]
    assert [i.suspect is not None for i in items] == [False, False, True, False]
    assert "differs from the target 3" in (items[2].suspect or "")


def test_processbench_gsm8k_mrben_loaders(tmp_path: Path) -> None:
    pb = tmp_path / "pb.json"
    pb.write_text(json.dumps([{"id": "x-0", "problem": "p", "steps": ["a", "b"], "label": 1}]))
    [item] = load(pb, EvalFormat.PROCESSBENCH).items
    assert (item.id, item.steps, item.label) == ("x-0", ["a", "b"], 1)

    gsm = tmp_path / "gsm.jsonl"
    gsm.write_text(
        json.dumps({"question": "q", "answer": "He has 2+3=<<2+3=5>>5.\nSo 5*2=10\n#### 10"}) + "\n"
    )
    [g] = load(gsm, EvalFormat.GSM8K).items
    assert (
        g.steps == ["He has 2+3=<<2+3=5>>5.", "So 5*2=10"]
        and g.label == -1
        and g.meta["final_answer"] == "10"
    )

    mr = tmp_path / "mr.json"
    sol = {
        "Question": "q?",
        "Options": "A: 1",
        "Model_Solution_Steps": ["Step 1: 2 + 2 = 4", "Step 2: so A", "Step 3:"],
        "Model_Solution_Correctness": "incorrect",
        "Model_Solution_First_Error_Step": "2",
    }
    ok = dict(sol, Model_Solution_Correctness="correct", Model_Solution_First_Error_Step="N/A")
    mr.write_text(json.dumps({"uuid-1": [sol, ok]}))
    a, b = load(mr, EvalFormat.MRBEN).items
    assert (a.label, b.label) == (1, -1) and a.problem == "q?\nA: 1"
    assert a.steps == ["2 + 2 = 4", "so A", "Step 3:"]  # an empty step keeps its prefix


@pytest.mark.parametrize(
    ("fmt", "content", "message"),
    [
        (EvalFormat.PROCESSBENCH, "{not json", "not JSON"),
        (EvalFormat.PROCESSBENCH, json.dumps({"a": 1}), "expected a JSON list"),
        (EvalFormat.MRBEN, json.dumps([1, 2]), "expected an object"),
    ],
)
def test_a_bad_file_gives_a_clear_error(tmp_path: Path, fmt: EvalFormat, content: str, message: str) -> None:
    p = tmp_path / "bad"
    p.write_text(content)
    with pytest.raises(DatasetError, match=message):
        load(p, fmt)
    with pytest.raises(DatasetError, match="no such file"):
        load(tmp_path / "missing.json", fmt)


@pytest.mark.parametrize(
    ("fmt", "bad", "good", "reason"),
    [
        (EvalFormat.PROCESSBENCH, {"problem": "p", "steps": ["a"]}, None, "missing field 'label'"),
        (EvalFormat.PROCESSBENCH, {"problem": "p", "steps": ["a"], "label": 3}, None, "has 1 steps"),
        (EvalFormat.PROCESSBENCH, {"problem": "p", "steps": [], "label": -1}, None, "non-empty list"),
        (EvalFormat.BBM, {"input": "x", "steps": ["a"], "mistake_index": "one"}, None, "integer or null"),
        (EvalFormat.BBM, {"input": "x", "steps": ["a"], "mistake_index": 5}, None, "has 1 steps"),
    ],
)
def test_one_malformed_record_is_skipped_and_counted(
    tmp_path: Path, fmt: EvalFormat, bad: dict[str, object], good: None, reason: str
) -> None:
    ok_pb = {"id": "ok", "problem": "p", "steps": ["2 + 2 = 4"], "label": -1}
    ok_bbm = {
        "input": "(2 + 2) =",
        "steps": ["2 + 2 = 4"],
        "mistake_index": None,
        "answer": "4",
        "target": "4",
    }
    p = tmp_path / "data"
    if fmt is EvalFormat.PROCESSBENCH:
        p.write_text(json.dumps([ok_pb, bad, ok_pb]))
    else:
        p.write_text("\n".join(json.dumps(x) for x in (ok_bbm, bad, ok_bbm)) + "\n")
    loaded = load(p, fmt)
    assert len(loaded.items) == 2 and len(loaded.skipped) == 1
    assert reason in loaded.skipped[0].reason
    rep = run(p, fmt, AuditorKind.COMPUTER)  # the run goes on and says what it skipped
    assert rep.metrics.n == 2 and [e.reason for e in rep.skipped] == [loaded.skipped[0].reason]


def test_mrben_first_error_past_the_last_step_is_skipped_not_fatal(tmp_path: Path) -> None:
    sol = {
        "Question": "q?",
        "Model_Solution_Steps": ["Step 1: 2 + 2 = 4", "Step 2: so 4"],
        "Model_Solution_Correctness": "incorrect",
        "Model_Solution_First_Error_Step": "2",
    }
    past = dict(sol, Model_Solution_First_Error_Step="7")
    p = tmp_path / "mr.json"
    p.write_text(json.dumps({"uuid-1": [sol, past], "uuid-2": [sol]}))
    loaded = load(p, EvalFormat.MRBEN)
    assert [i.label for i in loaded.items] == [1, 1]
    assert len(loaded.skipped) == 1 and "first error at step 6" in loaded.skipped[0].reason
    assert "uuid-1#1" in loaded.skipped[0].where


def test_a_label_refuted_by_exact_arithmetic_is_suspect_by_rule() -> None:
    items = [
        EvalItem(id="clean", problem="p", steps=["2 + 2 = 4", "so 4"], label=-1),
        EvalItem(id="refuted", problem="p", steps=["We have 364 / 4 = 273 yards."], label=-1),
        EvalItem(id="early", problem="p", steps=["3 * 3 = 10", "then 10 + 1 = 11", "x"], label=2),
        EvalItem(id="at-label", problem="p", steps=["3 * 3 = 9", "then 9 + 1 = 11"], label=1),
        EvalItem(id="rounded", problem="p", steps=["25 / 3 = 8.3 buses"], label=-1),
        EvalItem(id="units", problem="p", steps=["so 1/2 inch = 20 miles"], label=-1),
    ]
    out = {i.id: i.suspect for i in flag_refuted_labels(items)}
    assert out["clean"] is None and out["at-label"] is None  # the labelled step may be wrong
    assert out["refuted"] == "labelled error-free, but step 0 writes 364 / 4 = 273 (it is 91)"
    assert out["early"] == "labelled correct up to step 2, but step 0 writes 3 * 3 = 10 (it is 9)"
    assert out["rounded"] is None and out["units"] is None  # only plain whole-number arithmetic counts


# -- runs ------------------------------------------------------------------------------------


def test_computer_run_keeps_suspects_and_reports_figures_both_ways(bbm_file: Path) -> None:
    rep = run(bbm_file, EvalFormat.BBM, AuditorKind.COMPUTER)
    assert [e.id for e in rep.suspect] == ["bbm-2"]  # answer != target with no mistake labelled
    assert [(r.id, r.label, r.predicted, r.suspect) for r in rep.rows] == [
        ("bbm-0", 1, 1, False),
        ("bbm-1", -1, -1, False),
        ("bbm-2", -1, -1, True),
        ("bbm-3", 2, 2, False),
    ]
    assert "(2 + 3) = 6 (correct: 5)" in rep.rows[0].reason
    assert "A * 4 = 3 * 4" not in rep.rows[3].reason and "3 * 4 = 13 (correct: 12)" in rep.rows[3].reason
    assert rep.metrics.n == 4 and rep.metrics_without_suspect.n == 3
    m = rep.metrics_without_suspect
    assert (m.accuracy_erroneous, m.accuracy_correct, m.f1, m.false_alarms) == (1.0, 1.0, 1.0, 0)
    limited = run(bbm_file, EvalFormat.BBM, AuditorKind.COMPUTER, limit=3)
    assert [r.id for r in limited.rows] == ["bbm-0", "bbm-1", "bbm-2"]
    with pytest.raises(EvalError, match="limit"):
        run(bbm_file, EvalFormat.BBM, AuditorKind.COMPUTER, limit=0)


def test_step_tasks_give_previous_steps_as_parents() -> None:
    item = EvalItem(id="i", problem="p", steps=["a", "b", "c"], label=-1)
    tasks = step_tasks(item)
    assert [[p.content for p in t.context.parents] for t in tasks] == [[], ["a"], ["a", "b"]]
    assert [t.step_index for t in tasks] == [0, 1, 2]
    assert run_per_step(item, ComputerAuditor()).decided is False


def test_hdag_route_maps_segment_failures_to_steps(make_hdag: Callable[..., HDAG]) -> None:
    h = make_hdag(
        "Tom has 3 bags of 4 apples and eats 2.",
        ["Count the apples.", "3 * 4 = 12 apples.", "12 - 2 = 9 left."],
        levels=[Level.GOAL, Level.STEP, Level.STEP],
        edges=[("G1", "ST1", Relationship.DECOMPOSES_TO), ("ST2", "ST1", Relationship.DEPENDS_ON)],
    )
    item = EvalItem(id="h", problem=h.document.problem_text, steps=["Count.", "x", "y"], label=2)
    r = run_hdag(item, h, ComputerAuditor())
    assert (r.predicted, r.decided, r.claims_checked) == (2, True, 2)
    assert r.reason == "ST2: 12 - 2 = 9 (correct: 10)"
    # structure alone: no definite defect anywhere, so it decides nothing (it never vouches)
    alone = run_hdag(item, h, None)
    assert (alone.predicted, alone.decided, alone.claims_checked) == (-1, False, 0)


def test_missing_backends_fail_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(EvalError, match="trustnode.no_such_module.f is not available"):
        _hdag_function("trustnode.no_such_module", "f")
    monkeypatch.setattr(modes_mod.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(EvalError, match="LLM judge"):
        modes_mod.llm_auditor()


# -- reports and CLI -------------------------------------------------------------------------


def test_report_files(bbm_file: Path, tmp_path: Path) -> None:
    rep = run(bbm_file, EvalFormat.BBM, AuditorKind.COMPUTER)
    paths = write(rep, tmp_path / "out")
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = paths["markdown"].read_text()
    assert "| F1 (ProcessBench) | 100.0% | 100.0% |" in md and "| bbm-2 | no mistake labelled" in md
    assert "| traces | 4 (2 with an error, 2 without) | 3 (2 with an error, 1 without) |" in md
    assert json.loads(paths["json"].read_text())["metrics_without_suspect"]["f1"] == 1.0
    assert len(paths["rows"].read_text().splitlines()) == 4
    assert markdown(rep, max_rows=1).count("| bbm-") == 2  # one row + the suspect record


def test_cli_eval(bbm_file: Path, tmp_path: Path) -> None:
    cli = CliRunner()
    res = cli.invoke(app, ["eval", str(bbm_file), "--format", "bbm", "--auditor", "computer", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["metrics"]["accuracy_erroneous"] == 1.0 and len(data["rows"]) == 4
    assert [s["id"] for s in data["suspect"]] == ["bbm-2"]
    res = cli.invoke(app, ["eval", str(bbm_file), "--format", "bbm", "--report", str(tmp_path / "r")])
    assert res.exit_code == 0 and (tmp_path / "r" / "plot.png").is_file() and "F1" in res.stdout
    bad = cli.invoke(app, ["eval", str(tmp_path / "nope.jsonl"), "--format", "bbm"])
    assert bad.exit_code == 1 and "no such file" in bad.output
    bad = cli.invoke(app, ["eval", str(bbm_file), "--format", "csv"])
    assert bad.exit_code == 2
    bad = cli.invoke(app, ["eval", str(bbm_file), "--format", "bbm", "--annotations", "keep"])
    assert bad.exit_code == 1 and "--annotations" in bad.output


def test_llm_mode_runs_the_judge_against_a_local_endpoint(
    bbm_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trustnode.audit.llm_judge import arithmetic_judge_responder
    from trustnode.llm.fake_server import FakeOpenAIServer, Reply

    def flaky(request: dict[str, Any]) -> Any:
        # the server refuses every request about one trace: that trace fails, the run goes on
        if "A * 4 = 3 * 4" in json.dumps(request):
            return Reply.http_error(400, "fake server: refused")
        return arithmetic_judge_responder(request)

    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path / "data"))
    with FakeOpenAIServer(responder=flaky, lifetime_s=60) as srv:
        monkeypatch.setenv("TRUSTNODE_LLM__BASE_URL", srv.base_url)
        monkeypatch.setenv("TRUSTNODE_LLM__CACHE_DIR", str(tmp_path / "cache"))
        rep = run(bbm_file, EvalFormat.BBM, AuditorKind.LLM)
        assert srv.chat_requests  # the judge really asked the endpoint
    assert [(r.id, r.predicted) for r in rep.rows] == [("bbm-0", 1), ("bbm-1", -1), ("bbm-2", -1)]
    assert [f.id for f in rep.failed] == ["bbm-3"] and "LLM calls failed" in rep.failed[0].reason
    assert rep.metrics_without_suspect.f1 == 1.0
    u = rep.llm
    assert u is not None and u.calls > 0 and u.requests >= u.calls - u.repairs
    assert u.prompt_tokens > 0 and u.completion_tokens > 0 and u.latency_s > 0 and u.rejected >= 1
    assert "## LLM calls" in markdown(rep)
    # an endpoint that is down at start is a clear error before any trace is read
    monkeypatch.setenv("TRUSTNODE_LLM__BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("TRUSTNODE_LLM__CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("TRUSTNODE_LLM__MAX_RETRIES", "0")
    monkeypatch.setenv("TRUSTNODE_LLM__TIMEOUT_S", "2")
    with pytest.raises(EvalError, match="cannot start the LLM judge"):
        run(bbm_file, EvalFormat.BBM, AuditorKind.LLM)


PB_TRACES = [
    {
        "id": "pb-0",
        "problem": "Tom has 3 bags of 4 apples and eats 2. How many apples are left?",
        "steps": [
            "Tom has 3 bags with 4 apples each, so he has 3 * 4 = 12 apples.",
            "He eats 2 of them, so 12 - 2 = 9 apples are left.",
            "The answer is 9.",
        ],
        "label": 1,
    },
    {
        "id": "pb-1",
        "problem": "Tom has 3 bags of 4 apples and eats 2. How many apples are left?",
        "steps": [
            "Tom has 3 bags with 4 apples each, so he has 3 * 4 = 12 apples.",
            "He eats 2 of them, so 12 - 2 = 10 apples are left.",
            "The answer is 10.",
        ],
        "label": -1,
    },
]


def test_pipeline_and_structural_modes_use_the_hdag_package(tmp_path: Path) -> None:
    p = tmp_path / "pb.json"
    p.write_text(json.dumps(PB_TRACES))
    pipe = run(p, EvalFormat.PROCESSBENCH, AuditorKind.PIPELINE)
    assert [(r.id, r.predicted) for r in pipe.rows] == [("pb-0", 1), ("pb-1", -1)]
    assert pipe.rows[0].reason.endswith("12 - 2 = 9 (correct: 10)")
    assert pipe.rows[0].segments > 3  # the offline decomposer split the steps further
    assert pipe.metrics.f1 == 1.0 and pipe.failed == []
    structural = run(p, EvalFormat.PROCESSBENCH, AuditorKind.STRUCTURAL)
    assert len(structural.rows) == 2 and structural.metrics.claims_checked == 0
    # the importer makes a GOAL node and one node per step; no definite defect, no vote
    assert all(not r.decided and r.segments == 4 and r.predicted == -1 for r in structural.rows)
    by = {f.kind: f for f in structural.structure}
    assert set(by) == {"cycle", "forward_dependency", "unclosed", "unsupported"}
    assert by["cycle"].votes and not by["unclosed"].votes
    assert by["cycle"].on_wrong_steps == by["cycle"].on_correct_steps == 0


def test_a_trace_the_decomposer_refuses_is_listed_not_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "pb.json"
    p.write_text(json.dumps(PB_TRACES))
    real = runner_mod.decompose_offline

    def picky(item: EvalItem) -> HDAG:
        if item.id == "pb-1":
            raise ValueError("span 3..9 is not in the document")
        return real(item)

    monkeypatch.setattr(runner_mod, "decompose_offline", picky)
    rep = run(p, EvalFormat.PROCESSBENCH, AuditorKind.PIPELINE)
    assert [r.id for r in rep.rows] == ["pb-0"] and rep.metrics.n == 1
    assert [(f.id, f.reason) for f in rep.failed] == [
        ("pb-1", "not decomposable: span 3..9 is not in the document")
    ]
    assert "## Traces that could not be audited" in markdown(rep)

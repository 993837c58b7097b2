"""The evaluation harness: metrics on a hand-made fixture, loaders, runs, reports, CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trustnode.audit.computer import ComputerAuditor
from trustnode.audit.evaluation import AuditorKind, EvalError, EvalFormat, TraceRow, compute, load, run
from trustnode.audit.evaluation import runner as runner_mod
from trustnode.audit.evaluation.datasets import DatasetError, EvalItem
from trustnode.audit.evaluation.report import markdown, write
from trustnode.audit.evaluation.runner import _hdag_function, run_hdag, run_per_step, step_tasks
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
    items = load(bbm_file, EvalFormat.BBM)
    assert [i.label for i in items] == [1, -1, -1, 2]
    assert [i.suspect is not None for i in items] == [False, False, True, False]
    assert "differs from the target 3" in (items[2].suspect or "")


def test_processbench_gsm8k_mrben_loaders(tmp_path: Path) -> None:
    pb = tmp_path / "pb.json"
    pb.write_text(json.dumps([{"id": "x-0", "problem": "p", "steps": ["a", "b"], "label": 1}]))
    [item] = load(pb, EvalFormat.PROCESSBENCH)
    assert (item.id, item.steps, item.label) == ("x-0", ["a", "b"], 1)

    gsm = tmp_path / "gsm.jsonl"
    gsm.write_text(
        json.dumps({"question": "q", "answer": "He has 2+3=<<2+3=5>>5.\nSo 5*2=10\n#### 10"}) + "\n"
    )
    [g] = load(gsm, EvalFormat.GSM8K)
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
    a, b = load(mr, EvalFormat.MRBEN)
    assert (a.label, b.label) == (1, -1) and a.problem == "q?\nA: 1"
    assert a.steps == ["2 + 2 = 4", "so A", "Step 3:"]  # an empty step keeps its prefix


@pytest.mark.parametrize(
    ("fmt", "content", "message"),
    [
        (EvalFormat.PROCESSBENCH, "{not json", "not JSON"),
        (EvalFormat.PROCESSBENCH, json.dumps([{"problem": "p", "steps": ["a"]}]), "missing field 'label'"),
        (
            EvalFormat.PROCESSBENCH,
            json.dumps([{"problem": "p", "steps": ["a"], "label": 3}]),
            "past the last",
        ),
        (EvalFormat.PROCESSBENCH, json.dumps([{"problem": "p", "steps": [], "label": -1}]), "non-empty list"),
        (EvalFormat.BBM, '{"input": "x", "steps": ["a"], "mistake_index": "one"}\n', "integer or null"),
        (EvalFormat.MRBEN, json.dumps([1, 2]), "expected an object"),
    ],
)
def test_bad_files_give_a_clear_error(tmp_path: Path, fmt: EvalFormat, content: str, message: str) -> None:
    p = tmp_path / "bad"
    p.write_text(content)
    with pytest.raises(DatasetError, match=message):
        load(p, fmt)
    with pytest.raises(DatasetError, match="no such file"):
        load(tmp_path / "missing.json", fmt)


# -- runs ------------------------------------------------------------------------------------


def test_computer_run_predicts_first_mistake_and_excludes_suspects(bbm_file: Path) -> None:
    rep = run(bbm_file, EvalFormat.BBM, AuditorKind.COMPUTER)
    assert [e.id for e in rep.excluded] == ["bbm-2"]
    assert [(r.id, r.label, r.predicted) for r in rep.rows] == [
        ("bbm-0", 1, 1),
        ("bbm-1", -1, -1),
        ("bbm-3", 2, 2),
    ]
    assert "(2 + 3) = 6 (correct: 5)" in rep.rows[0].reason
    assert "A * 4 = 3 * 4" not in rep.rows[2].reason and "3 * 4 = 13 (correct: 12)" in rep.rows[2].reason
    m = rep.metrics
    assert (m.accuracy_erroneous, m.accuracy_correct, m.f1, m.false_alarms) == (1.0, 1.0, 1.0, 0)
    kept = run(bbm_file, EvalFormat.BBM, AuditorKind.COMPUTER, keep_suspect=True, limit=3)
    assert kept.excluded == [] and [r.id for r in kept.rows] == ["bbm-0", "bbm-1", "bbm-2"]
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
    r = run_hdag(item, h, ComputerAuditor(), strict_structure=False)
    assert (r.predicted, r.decided, r.claims_checked) == (2, True, 2)
    assert r.reason == "ST2: 12 - 2 = 9 (correct: 10)"
    # structure alone: ST1 uses the problem's numbers and is used by ST2; ST2 is final -> no defect
    strict = run_hdag(item, h, None, strict_structure=True)
    assert (strict.predicted, strict.decided, strict.claims_checked) == (-1, True, 0)


def test_missing_backends_fail_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(EvalError, match="trustnode.no_such_module.f is not available"):
        _hdag_function("trustnode.no_such_module", "f")
    monkeypatch.setattr(runner_mod.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(EvalError, match="LLM judge"):
        runner_mod.llm_auditor()


# -- reports and CLI -------------------------------------------------------------------------


def test_report_files(bbm_file: Path, tmp_path: Path) -> None:
    rep = run(bbm_file, EvalFormat.BBM, AuditorKind.COMPUTER)
    paths = write(rep, tmp_path / "out")
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = paths["markdown"].read_text()
    assert "| F1 (ProcessBench) | 100.0% |" in md and "| bbm-2 | no mistake labelled" in md
    assert json.loads(paths["json"].read_text())["metrics"]["f1"] == 1.0
    assert len(paths["rows"].read_text().splitlines()) == 3
    assert markdown(rep, max_rows=1).count("| bbm-") == 2  # one row + the excluded record


def test_cli_eval(bbm_file: Path, tmp_path: Path) -> None:
    cli = CliRunner()
    res = cli.invoke(app, ["eval", str(bbm_file), "--format", "bbm", "--auditor", "computer", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["metrics"]["accuracy_erroneous"] == 1.0 and len(data["rows"]) == 3
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
    from trustnode.llm.fake_server import FakeOpenAIServer

    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path / "data"))
    with FakeOpenAIServer(responder=arithmetic_judge_responder, lifetime_s=60) as srv:
        monkeypatch.setenv("TRUSTNODE_LLM__BASE_URL", srv.base_url)
        monkeypatch.setenv("TRUSTNODE_LLM__CACHE_DIR", str(tmp_path / "cache"))
        rep = run(bbm_file, EvalFormat.BBM, AuditorKind.LLM)
        assert srv.chat_requests  # the judge really asked the endpoint
    assert [(r.id, r.predicted) for r in rep.rows] == [("bbm-0", 1), ("bbm-1", -1), ("bbm-3", 2)]
    assert rep.metrics.f1 == 1.0
    monkeypatch.setenv("TRUSTNODE_LLM__BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("TRUSTNODE_LLM__CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("TRUSTNODE_LLM__MAX_RETRIES", "0")
    monkeypatch.setenv("TRUSTNODE_LLM__TIMEOUT_S", "2")
    with pytest.raises(EvalError, match="trace bbm-0: the LLM judge failed"):
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
    # the importer makes a GOAL node for the problem and one node per step; only the
    # step/operation nodes are judged by structure
    assert all(r.decided and r.segments == 4 and r.decided_segments == 3 for r in structural.rows)


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

"""Auditor backends and their evaluation (SPEC 6 and 8).

- `base.Auditor`: the one interface, `audit(AuditTask) -> AuditResult` (models in
  `trustnode.models.audit`); `context.build_tasks(hdag)` makes the tasks with the context
  an auditor may see.
- `computer.ComputerAuditor` (T_Auto) over `arithmetic` (claim extraction, exact checks).
- `structural.StructuralAuditor` and `structural.analyze` (DAG-MATH closeness, graph facts).
- `llm_judge.LLMJudge` (T_LLM) and `human_queue` (T_Human).
- `mapping.map_to_steps`: earliest failing segment -> original step.
- `evaluation`: datasets, ProcessBench metrics, runs and reports (`trustnode eval`).
"""

"""Auditor backends and their evaluation (SPEC 6 and 8).

- `base.Auditor`: the one interface, `audit(AuditTask) -> AuditResult` (models in
  `trustnode.models.audit`); `context.build_tasks(hdag)` makes the tasks with the context
  an auditor may see.
- `computer.ComputerAuditor` (T_Auto) over `claims` (arithmetic and algebra claims, checked
  exactly; `claims.has_decidable_claim` is the one definition of "checkable" the router uses).
- `structural.StructuralAuditor` and `structural.analyze` (DAG-MATH closeness, graph facts;
  FAIL only on definite defects, everything else is evidence).
- `llm_judge.LLMJudge` (T_LLM) and `human_queue` (T_Human).
- `mapping.map_to_steps`: earliest failing segment -> original step.
- `evaluation`: datasets, ProcessBench metrics, runs and reports (`trustnode eval`).
"""

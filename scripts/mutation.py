"""Mutation testing of one core module against its own fast tests (docs/testing.md, "Mutation testing").

    .venv/bin/python scripts/mutation.py canonical run --max-children 1
    .venv/bin/python scripts/mutation.py canonical results
    .venv/bin/python scripts/mutation.py canonical show tracetui.core.canonical.x_canonical_json__mutmut_3

The first argument names a module (``MODULES`` below); the rest is passed to mutmut 3 unchanged. Each module
runs in its own folder ``mutants/by-module/<name>/`` (ignored by git), so the results of one module survive a run
of another. The folder links to the tree (``tracetui/``, ``tests/``, ...) and mutmut copies it to its own
``mutants/`` there; the config is ``[tool.mutmut]`` of ``pyproject.toml`` with two fields replaced for the module:
``only_mutate`` (the module's files) and ``pytest_add_cli_args_test_selection`` (its targeted tests). Each
mutant then runs only those of the targeted tests that reach the mutated function (mutmut's own per-function
selection), a few seconds at most, instead of most of ``tests/core``.

Errors: an unknown module name exits with status 2 and the list of names; mutmut itself must be installed in the
interpreter running this script (``pip install mutmut==3.8.1``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ALIGN_TESTS = [
    "tests/core/test_align.py",
    "tests/core/test_align_siblings.py",
    "tests/core/test_align_rules.py",
    "tests/core/test_align_sibling_rules.py",
    "tests/core/test_diff.py",
    "tests/core/test_first_divergence_rules.py",
    "tests/core/test_compare.py",
]

REDACT_TESTS = [
    "tests/core/harness/test_redact.py",
    "tests/core/harness/test_redact_config.py",
    "tests/core/harness/test_redact_coverage.py",
    "tests/core/harness/test_redact_linear.py",
    "tests/core/harness/test_redact_rules.py",
    "tests/core/harness/test_redact_key_rules.py",
    # it records and replays an agent through the CLI, whose replay starts a sandboxed child that imports the
    # mutated tree outside mutmut's folder (every mutant "fails" there); the names it pins are redact.py's own
    "--deselect",
    "tests/core/harness/test_redact_coverage.py::test_tool_names_follow_the_same_rules_in_record_replay_and_promote",
]

# the fast tests of core/triage/ (not test_triage_acceptance.py: see "verdict")
TRIAGE_TESTS = [
    "tests/core/test_triage.py",
    "tests/core/test_triage_order.py",
    "tests/core/test_triage_misses.py",
    "tests/core/test_triage_foreign.py",
    "tests/core/test_triage_verdict_rules.py",
]

# module name -> (files mutated, tests run against them: the module's own fast tests)
MODULES: dict[str, tuple[list[str], list[str]]] = {
    "canonical": (["tracetui/core/canonical.py"], ["tests/core/test_canonical.py"]),
    "compare": (
        ["tracetui/core/diff/compare.py"],
        ["tests/core/test_compare.py", "tests/core/test_compare_mutants.py", "tests/core/test_rules_pinned.py",
         "tests/core/test_envelopes.py"],
    ),
    "trace_diff": (
        ["tracetui/core/diff/trace_diff.py"],
        [
            "tests/core/test_diff.py",
            "tests/core/test_first_divergence_rules.py",
            "tests/core/test_paths_by_rule.py",
            "tests/core/test_rules_pinned.py",
            "tests/core/test_comparable.py",
            "tests/core/test_compare.py",
            "tests/core/test_align_siblings.py",
            "tests/core/harness/test_first_divergence_agrees.py",
            # not test_early.py / test_early_feed.py: they start reader children and read files of thousands of
            # spans (seconds each); core/load/early's walk calls row_divergence and replay_first, pinned here
        ],
    ),
    "verdict": (
        ["tracetui/core/triage/verdict.py"],
        [
            "tests/core/test_triage.py",
            "tests/core/test_triage_order.py",
            "tests/core/test_triage_misses.py",
            "tests/core/test_triage_foreign.py",
            "tests/core/test_triage_verdict_rules.py",
            # not test_triage_acceptance.py: its module fixture records six runs through the CLI and the harness
            # again in every mutant's session (seconds each on a loaded machine), and its batch and Pilot tests
            # are core/triage/batch's and the TUI's
        ],
    ),
    "cassette": (
        ["tracetui/core/harness/cassette.py"],
        [
            "tests/core/harness/test_harness.py",
            "tests/core/harness/test_fail_closed.py",
            "tests/core/harness/test_duplicate_keys.py",
            "tests/core/harness/test_first_divergence_agrees.py",
            "tests/core/harness/test_cassette_rules.py",
        ],
    ),
    "context": (
        ["tracetui/core/harness/context.py"],
        [
            "tests/core/harness/test_harness.py",
            "tests/core/harness/test_fail_closed.py",
            "tests/core/harness/test_ambient.py",
            "tests/core/harness/test_guard.py",
            "tests/core/harness/test_first_divergence_agrees.py",
            "tests/core/harness/test_context_rules.py",
            "tests/core/harness/test_context_read_rules.py",
            "tests/core/harness/test_context_write_rules.py",
        ],
    ),
    "golden": (["tracetui/core/golden/*"], ["tests/core/golden"]),
    # core/golden/ one file at a time, each against the tests that reach it fast (the whole folder is thousands of
    # mutants against its acceptance tests: the `golden` entry above, a nightly job)
    "golden-clauses": (
        ["tracetui/core/golden/clauses.py"],
        ["tests/core/golden/test_contract.py", "tests/core/golden/test_contract_rules.py"],
    ),
    "golden-checking": (
        ["tracetui/core/golden/checking.py"],
        ["tests/core/golden/test_contract.py", "tests/core/golden/test_checking_rules.py"],
    ),
    "golden-derive": (
        ["tracetui/core/golden/derive.py"],
        ["tests/core/golden/test_promote.py", "tests/core/golden/test_derive_rules.py",
         "tests/core/golden/test_derive_contract_rules.py"],
    ),
    # derive.py against its direct rule tests only (runs built in the test, milliseconds each): the `golden-derive`
    # entry above also promotes whole sample cases (test_promote.py), seconds a mutant
    "golden-derive-fast": (
        ["tracetui/core/golden/derive.py"],
        ["tests/core/golden/test_derive_rules.py", "tests/core/golden/test_derive_contract_rules.py"],
    ),
    "golden-promote": (
        ["tracetui/core/golden/promote.py"],
        ["tests/core/golden/test_promote.py", "tests/core/golden/test_promotion_keeps.py",
         "tests/core/golden/test_promote_write_rules.py"],
    ),
    # core/diff's span alignment: the three files against the alignment's tests (each mutant runs only those that
    # reach its function); test_compare.py pins span_key, test_diff.py and test_first_divergence_rules.py the rows
    "lcs": (["tracetui/core/diff/lcs.py"], ALIGN_TESTS),
    "siblings": (["tracetui/core/diff/siblings.py"], ALIGN_TESTS),
    "align": (["tracetui/core/diff/align.py", "tracetui/core/diff/sides.py"], ALIGN_TESTS),
    "replayability": (
        ["tracetui/core/triage/replayability.py"],
        ["tests/core/test_replayability.py", "tests/core/test_replayability_rules.py"],
    ),
    # the harness's safety rules: what a replay may reach, which tools are reads, what is redacted
    "guard": (
        ["tracetui/core/harness/guard.py"],
        ["tests/core/harness/test_guard.py", "tests/core/harness/test_guard_rules.py"],
    ),
    "tools": (
        ["tracetui/core/harness/tools.py"],
        ["tests/core/harness/test_ambient.py", "tests/core/harness/test_tools_rules.py"],
    ),
    # not tests/test_secret_corpus.py: it plants secrets through the CLI's commands (10 s a mutant); not the
    # sandbox tests (namespaces, children)
    "redact": (
        ["tracetui/core/harness/redact.py"],
        REDACT_TESTS,
    ),
    "redact-patterns": (
        ["tracetui/core/harness/redact_patterns.py"],
        REDACT_TESTS,
    ),
    "redact-tokens": (
        ["tracetui/core/harness/redact_tokens.py"],
        REDACT_TESTS,
    ),
    # the three helpers of triage: why a trial left the path (reached through triage()), and the evidence of two
    # step-1 findings (reached through assess(), the harness's cassette and their own rule tests)
    "cause": (
        ["tracetui/core/triage/cause.py"],
        [
            "tests/core/test_triage.py",
            "tests/core/test_triage_order.py",
            "tests/core/test_triage_misses.py",
            "tests/core/test_triage_foreign.py",
            "tests/core/test_triage_verdict_rules.py",
            "tests/core/test_triage_cause_rules.py",
        ],
    ),
    "truncation": (
        ["tracetui/core/triage/truncation.py"],
        [
            "tests/core/test_replayability.py",
            "tests/core/test_replayability_rules.py",
            "tests/core/test_rules_pinned.py",
            "tests/core/test_triage_misses.py",
            "tests/core/harness/test_cassette_rules.py",
            "tests/core/test_truncation_rules.py",
        ],
    ),
    "nondeterminism": (
        ["tracetui/core/triage/nondeterminism.py"],
        [
            "tests/core/test_replayability.py",
            "tests/core/test_replayability_rules.py",
            "tests/core/test_triage_misses.py",
            "tests/core/test_nondeterminism_rules.py",
        ],
    ),
    "envelopes": (
        ["tracetui/core/diff/envelopes.py"],
        ["tests/core/test_envelopes.py", "tests/core/test_envelopes_rules.py", "tests/core/test_compare_mutants.py",
         "tests/core/test_compare.py"],
    ),
    "noise": (
        ["tracetui/core/diff/noise.py"],
        [
            "tests/cli/test_noise_rules.py",
            "tests/core/test_noise_hiding_rules.py",
            # not test_pairread.py: its noise tests read the pair through reader children (seconds each)
        ],
    ),
    "comparable": (
        ["tracetui/core/diff/comparable.py"],
        ["tests/core/test_comparable.py", "tests/core/test_comparable_rules.py",
         "tests/core/test_first_divergence_rules.py", "tests/cli/test_diff_redaction_config.py"],
    ),
    # core/triage/'s small helpers, each against the triage tests that reach it and its own rule tests
    "triage-path": (["tracetui/core/triage/path.py"], TRIAGE_TESTS + ["tests/core/test_triage_path_rules.py"]),
    "standins": (["tracetui/core/triage/standins.py"], TRIAGE_TESTS + ["tests/core/test_triage_standins_rules.py"]),
    "crosscheck": (["tracetui/core/triage/crosscheck.py"],
                   TRIAGE_TESTS + ["tests/core/test_triage_crosscheck_rules.py"]),

    # round 8a: diff report, jsonpaths, labels
    # core/diff/jsonpaths.py: the pair screen's pretty values and the lines of a divergence's paths. No fast test
    # reached it but one pure test of the Pilot file (its other tests drive the Textual app: seconds each)
    "jsonpaths": (
        ["tracetui/core/diff/jsonpaths.py"],
        ["tests/tui/test_pilot_pair_screen.py::test_line_range_follows_the_compare_path_spelling",
         "tests/core/test_jsonpaths_rules.py"],
    ),
    # not test_pilot_labels.py (the Textual app), nor test_triage.py / test_batch.py (they save labels to triage
    # whole runs: the labels they show are verdict's and batch's)
    "diff-labels": (
        ["tracetui/core/diff/labels.py"],
        ["tests/core/test_labels.py", "tests/cli/test_labels_cli.py", "tests/core/test_labels_rules.py"],
    ),
    # the report `diff --format json` prints. Not test_cli.py, test_cli_first_minutes.py, test_real_pairs.py,
    # readers/test_otlp_lazy.py: each of their diff tests reaches diff_report through reading sample pairs and the
    # whole CLI (10 s a mutant at load 15: the "before" of round 8a ran with them, 0.07-0.1 mutants a second)
    "diff-report": (
        ["tracetui/core/diff/report.py"],
        ["tests/core/test_labels.py", "tests/cli/test_labels_cli.py", "tests/cli/test_unrelated_runs.py",
         "tests/core/test_comparable.py", "tests/core/test_diff_report_rules.py"],
    ),
    # (end of round 8a)

    # round 8b: triage batch, core values, golden contract
    # core/values.py (the equality flags and leaf changes compare.py and the cassette use): compare.py's own tests,
    # the cassette's rule tests (argument and message matching through diff_field/strip_ids) and its direct rules
    "values": (
        ["tracetui/core/values.py"],
        ["tests/core/test_compare.py", "tests/core/test_compare_mutants.py", "tests/core/test_rules_pinned.py",
         "tests/core/test_envelopes.py", "tests/core/harness/test_cassette_rules.py",
         "tests/core/test_values_rules.py"],
    ),
    # core/golden/contract.py only re-exports clauses.py and checking.py (no function of its own)
    "golden-contract": (
        ["tracetui/core/golden/contract.py"],
        ["tests/core/golden/test_contract.py", "tests/core/golden/test_contract_rules.py"],
    ),
    # core/triage/batch.py: test_batch.py (folders written in the test; its 25-pair batches run triage, 0.1-0.3 s
    # each), test_batch_cli.py and the direct rule tests (traces built in the test). Not in test_batch_cli.py: the
    # subprocess test (a child imports the tree outside mutmut's folder) and `tracetui triage --batch` through
    # main() (5 s: it imports every command; the wiring, not batch.py). Not test_triage_acceptance.py (records runs
    # through the harness: seconds a mutant, as for `verdict`) nor test_nightly.py (a Dask cluster)
    "triage-batch": (
        ["tracetui/core/triage/batch.py"],
        ["tests/core/test_batch.py", "tests/cli/test_batch_cli.py", "tests/core/test_batch_rules.py",
         "--deselect", "tests/cli/test_batch_cli.py::test_batch_without_a_terminal_never_imports_rich",
         "--deselect", "tests/cli/test_batch_cli.py::test_tracetui_triage_batch_runs_it"],
    ),
    # (end of round 8b)

    # round 8c: golden runner, promote's survivors
    # the golden runner against its in-process tests (the agents run in this process: ~0.1 s a test, the first 1.4 s):
    # test_runner.py, the CLI's test_golden_cli.py (run_golden calls run_cases: --keep, --force, the report) and the
    # two of test_promotion_keeps.py that run a promoted case; not test_golden_acceptance.py, test_readme.py,
    # test_secret_corpus.py, test_sandbox.py (they start `tracetui` children, seconds each, which import the tree
    # outside mutmut's folder)
    "golden-runner": (
        ["tracetui/core/golden/runner.py"],
        ["tests/core/golden/test_runner.py", "tests/cli/test_golden_cli.py",
         "tests/core/golden/test_promotion_keeps.py", "tests/core/golden/test_runner_rules.py"],
    ),
    # (end of round 8c)

    # round 8d: harness run, agent
    # core/harness/agent.py (load_agent, AgentSpec) against the harness tests that load agents in this process (the
    # agent files of tests/data/harness) and its rule tests. Not test_fail_closed.py (two of its tests replay through
    # `python -m tracetui`, a child importing the tree outside mutmut's folder), not test_sandbox.py (children),
    # not the golden/triage/TUI tests that load agents on the way (seconds each; they pin other modules)
    "harness-agent": (
        ["tracetui/core/harness/agent.py"],
        [
            "tests/core/harness/test_agent_load_threads.py",
            "tests/core/harness/test_locate_agent_ref.py",
            "tests/core/harness/test_harness.py",
            "tests/core/harness/test_heldout_agent.py",
            "tests/core/harness/test_agent_rules.py",
        ],
    ),
    # core/harness/run.py (record, replay, RunResult) against the harness tests that record and replay in this
    # process (test_heldout_agent.py runs the CLI's main() with the sandbox disabled) and its rule tests
    "harness-run": (
        ["tracetui/core/harness/run.py"],
        [
            "tests/core/harness/test_harness.py",
            "tests/core/harness/test_heldout_agent.py",
            "tests/core/harness/test_duplicate_keys.py",
            "tests/core/harness/test_first_divergence_agrees.py",
            "tests/core/harness/test_context_rules.py",
            "tests/core/harness/test_fail_closed.py",
            "tests/core/harness/test_run_rules.py",
            # these two replay through `python -m tracetui` (a child that imports the tree outside mutmut's folder:
            # every mutant would "fail" there); the exit codes they pin are the CLI's
            "--deselect",
            "tests/core/harness/test_fail_closed.py::test_the_cli_exits_1_and_prints_the_write_mismatch",
            "--deselect",
            "tests/core/harness/test_fail_closed.py::test_the_cli_exit_codes_name_the_recording_outcomes",
        ],
    ),
    # (end of round 8d)

    # round 8e: harness project, runcontext, writer, steps, fixture, llm, relay
    # the harness's smaller modules, each against the in-process harness tests that reach it (records and replays
    # built in the test, milliseconds to a second each) and its own rule tests; not test_tempfiles.py (it kills a
    # child writing a trace), not test_sandbox.py (namespaced children: the mutated tree is not theirs), not the
    # TUI's Pilot tests of watch (seconds each)
    "writer": (
        ["tracetui/core/harness/writer.py"],
        ["tests/core/harness/test_harness.py", "tests/core/test_watch.py", "tests/core/harness/test_fail_closed.py",
         "tests/core/harness/test_ambient.py", "tests/core/harness/test_heldout_agent.py",
         "tests/core/harness/test_writer_rules.py"],
    ),
    "fixture": (
        ["tracetui/core/harness/fixture.py"],
        ["tests/core/harness/test_fixture_changes.py", "tests/core/harness/test_context_rules.py",
         "tests/core/harness/test_context_read_rules.py", "tests/core/harness/test_context_write_rules.py",
         "tests/core/harness/test_harness.py", "tests/core/harness/test_fail_closed.py",
         "tests/core/harness/test_fixture_rules.py"],
    ),
    "harness-llm": (
        ["tracetui/core/harness/llm.py"],
        ["tests/core/harness/test_harness.py", "tests/core/harness/test_fail_closed.py",
         "tests/core/harness/test_duplicate_keys.py", "tests/core/harness/test_first_divergence_agrees.py",
         "tests/core/harness/test_context_write_rules.py", "tests/core/harness/test_heldout_agent.py",
         "tests/core/harness/test_ambient.py", "tests/core/harness/test_llm_rules.py"],
    ),
    "steps": (
        ["tracetui/core/harness/steps.py"],
        ["tests/core/harness/test_harness.py", "tests/core/harness/test_context_read_rules.py",
         "tests/core/harness/test_context_write_rules.py", "tests/core/harness/test_ambient.py",
         "tests/core/harness/test_heldout_agent.py", "tests/core/harness/test_steps_rules.py"],
    ),
    # steps.py against its direct rule tests only (generators built in the test): a survivor of the `steps` entry
    # runs every record/replay test above (a minute and more each on a loaded machine)
    "steps-fast": (["tracetui/core/harness/steps.py"], ["tests/core/harness/test_steps_rules.py"]),
    "runcontext": (
        ["tracetui/core/harness/runcontext.py"],
        ["tests/core/harness/test_harness.py", "tests/core/harness/test_heldout_agent.py",
         "tests/core/harness/test_fail_closed.py", "tests/core/harness/test_ambient.py",
         "tests/core/harness/test_runcontext_rules.py"],
    ),
    "harness-project": (
        ["tracetui/core/harness/project.py"],
        ["tests/core/harness/test_ambient.py", "tests/core/harness/test_harness.py",
         "tests/core/harness/test_fail_closed.py", "tests/core/harness/test_project_rules.py"],
    ),
    # the model relay against its own rule tests only (a relay, its child side and a local endpoint in the test
    # process): the only other tests that reach it, test_sandbox.py's, run it across namespaced children
    "relay": (["tracetui/core/harness/relay.py"], ["tests/core/harness/test_relay_rules.py"]),
    # llm.py against its direct rule tests only (sessions built in the test, milliseconds each): the `harness-llm`
    # entry above records and replays whole runs (seconds a surviving mutant; 607 mutants)
    "harness-llm-fast": (["tracetui/core/harness/llm.py"], ["tests/core/harness/test_llm_rules.py"]),
    # (end of round 8e)

    # round 8f: harness redact_numbers, redact_wrapped, redact_config, redact_walk, ambient, sandbox
    # the Redactor's mixins, each against the redaction tests and its own rule tests (objects built in the test)
    "redact-walk": (["tracetui/core/harness/redact_walk.py"],
                    REDACT_TESTS + ["tests/core/harness/test_redact_walk_rules.py"]),
    "redact-config": (["tracetui/core/harness/redact_config.py"],
                      REDACT_TESTS + ["tests/core/harness/test_redact_config_rules.py"]),
    "redact-wrapped": (["tracetui/core/harness/redact_wrapped.py"],
                       REDACT_TESTS + ["tests/core/harness/test_redact_wrapped_rules.py"]),
    "redact-numbers": (["tracetui/core/harness/redact_numbers.py"],
                       REDACT_TESTS + ["tests/core/harness/test_redact_numbers_rules.py"]),
    # the ambient session (tracetui.record / tracetui.replay) against its in-process tests; not tests/integrations/
    # (each framework's client or server built per test, and the sessions are the integrations' subject there),
    # not test_sandbox.py (its replays start namespaced children) nor tests/test_secret_corpus.py (the CLI)
    "ambient": (
        ["tracetui/core/harness/ambient.py"],
        [
            "tests/core/harness/test_ambient.py",
            "tests/core/harness/test_context_write_rules.py",
            "tests/core/harness/test_tools_rules.py",
            "tests/core/harness/test_ambient_rules.py",
        ],
    ),
    # the namespace's helpers against their rule tests only (probe, child, environment, all monkeypatched in
    # process): test_sandbox.py's replays start namespaced children, which import the tree outside mutmut's folder,
    # and its module probes `unshare` when collected
    "sandbox": (["tracetui/core/harness/sandbox.py"], ["tests/core/harness/test_sandbox_rules.py"]),
    # (end of round 8f)

    # round 9a
    # (end of round 9a)

    # round 9b
    # the ambient session against round 8f's selection and the rules that show in the run itself (the engine's
    # arguments, the file as it runs and ends, volatile arguments, a foreign or incomplete recording)
    "ambient-9": (
        ["tracetui/core/harness/ambient.py"],
        [
            "tests/core/harness/test_ambient.py",
            "tests/core/harness/test_context_write_rules.py",
            "tests/core/harness/test_tools_rules.py",
            "tests/core/harness/test_ambient_rules.py",
            "tests/core/harness/test_ambient_engine_rules.py",
        ],
    ),
    # (end of round 9b)

    # round 9c
    # (end of round 9c)

    # round 9d
    # (end of round 9d)

}

# what the tests read besides the package and the tests (links, not copies: mutmut copies them once more)
LINKED = ["tracetui", "tests", "sample_runs", "golden", "docs", "examples", "benchmarks", "scripts", "README.md",
          "pyproject.toml"]


def workdir(name: str) -> Path:
    """``mutants/by-module/<name>/`` with links to the tree; created on first use."""
    folder = ROOT / "mutants" / "by-module" / name
    folder.mkdir(parents=True, exist_ok=True)
    for entry in LINKED:
        link = folder / entry
        if not link.exists() and not link.is_symlink() and (ROOT / entry).exists():
            link.symlink_to(ROOT / entry)
    return folder


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in MODULES:
        print(f"usage: mutation.py MODULE MUTMUT-ARGS...; MODULE is one of {', '.join(MODULES)}", file=sys.stderr)
        return 2
    name, rest = argv[0], argv[1:]
    files, tests = MODULES[name]
    os.chdir(workdir(name))

    import mutmut.configuration as configuration
    from mutmut.__main__ import cli

    config = configuration.config()  # [tool.mutmut] of the linked pyproject.toml
    config.only_mutate = files
    config.pytest_add_cli_args_test_selection = tests
    # mutmut's timeout is wall-clock ((test time + constant) x multiplier x 2): on a shared, niced machine a
    # mutant's tests can take 10x their CPU time; a few seconds of constant keep that from reading as a timeout
    config.timeout_constant = max(config.timeout_constant, 5.0)
    return cli.main(args=rest, prog_name=f"mutation.py {name}", standalone_mode=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

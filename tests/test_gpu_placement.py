"""Every rule that trains a torch model places it on the job's device (issues 20 and 38).

Which rules train is found from the workflow itself, not from a list: a rule trains a torch model when its script,
following the functions it refers to, reaches a function that

- calls ``run_loop(`` (neurips26.common.loop), the shared training loop every training of the library runs in
  (test_reruns_and_resume checks that a module backpropagating outside it says why), or
- calls both ``.backward(`` and ``.step(`` in its body, nested functions included: it computes gradients and
  steps a torch optimizer outside the shared loop (amortized_ot's one L-BFGS solve, say). A backward pass with
  no optimizer step (symm_optim's timing of one step of each optimizer, a gradient for evaluation) is no
  training.

The functions a script reaches: from the names the script's code refers to (called or passed on, as a step function
handed to ``run_loop``), the module-level functions, classes, module-level assignments (registries) and methods of
that name in the library files the script reaches (``library_files``, the rule's ``library`` input; the loop itself
left out), then the names those refer to, and so on. Names are resolved by name alone, so the search may follow a
function that is not called (two functions of one name are both followed), and misses only code reached through
strings (``getattr``) or called by Python itself (``forward``, which does not train); as a check on it, every rule
whose script sets up the shared loop (``LoopSettings(``) must be found.

For every such rule: (a) a function it reaches, or its script, calls ``job_device(``; (b) a test marked
``@pytest.mark.gpu_rule("<rule>")`` runs its work under tests/fake_gpu.py's ``fake_gpu()`` (in the test's body
or a function of the test's module that it calls), where a tensor left on the CPU fails as it would on a GPU;
(c) profiles/slurm gives it a GPU, or it is one of the CPU_TRAINING rules below, each with why a GPU would not
help. (a) and (b) hold for those too: a rule given a GPU later needs no other change. Every rule the profile gives
a GPU (sampling and scoring ones too) also satisfies (a) and (b).
"""

from __future__ import annotations

import ast
import re
from functools import cache

import pytest
import yaml

from conftest import ROOT
from neurips26.common.imports import library_files
from test_reruns_and_resume import RULE_LIBRARY, RULE_SCRIPTS, TRAINING_RULES

LOOP = "src/neurips26/common/loop.py"
PROFILE = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
GPU_RULES = sorted(rule for rule, res in PROFILE["set-resources"].items() if res.get("gpu"))

# Rules that train a torch model on the CPU at every scale, with why a GPU would not help. They place their work on
# loop.job_device() all the same (the CPU here), and a test runs it on the fake device. Times are CPU seconds of one
# thread, measured on the development machine.
CPU_TRAINING = {
    # paper 09's edge-of-stability pilot: tiny models (L4d48, 200 steps) at quick scale only; paper scale has no pilot
    "noisy_divergence_pilot": "the quick-scale pilot's tiny models; no paper-scale job",
    # one full-batch L-BFGS solve of K (L + 1) coefficients (at most a few thousand) on a design matrix that numpy
    # builds on the CPU; its fit time is set against the CPU solvers in the speed claims
    "amortized_ot_fit": "a small full-batch L-BFGS solve on a numpy design matrix",
    "amortized_ot_fit_seeded": "amortized_ot_fit with another seed",
    # the FD proxy's two-convolution classifier: paper scale 5000 steps of 256 images, 0.7 s a step at 64 px (0.14 s
    # at 32 px), so about 20 min on the job's 4 threads, inside its 30 min; the GPU goes to the denoisers' training
    "pred_loss_space_features": "a two-layer CNN classifier, 20 min on 4 threads at paper scale",
    # the RQ-VAE that gives items their semantic ids: an MLP at batch 1024, 0.06 s a step; paper scale 500 epochs of
    # at most 65k items (32k steps), about 15 min on 4 threads, inside its 2 h
    "seqrec_audit_semantic_ids": "an MLP RQ-VAE over the item embeddings, 15 min on 4 threads at paper scale",
    # quick and smoke scale pretrain a 3-stage ResNet for 400 steps at 64 px on scikit-image's photographs; paper
    # scale only loads the ImageNet ResNet-34 weights, so a GPU request (which applies at every scale) would idle
    "ecfr_teacher": "a small ResNet pretrained at quick scale only; paper scale loads ImageNet weights",
    # the pilot that chose paper 11's quick teacher, widths and steps on a draw no claim scores: quick and smoke scale
    # only (paper scale takes the reference's settings and has no tuning block), small networks at 64 px
    "ecfr_tune": "a quick-scale pilot of small networks at 64 px; paper scale has no tuning",
    # a sparse GP with 64 inducing points on 1,000 points (paper scale, batch 128): an M x M Cholesky and B x M
    # kernels per step; float64 throughout, where a GPU's throughput is small
    "gplvm_assvi_train": "a float64 sparse GP of 64 inducing points on 1,000 points",
}

# ---- the functions a script reaches -----------------------------------------------------------------------------


class Code:
    """What one piece of code (a function, a class body, an assignment, a script) refers to, and what it does."""

    def __init__(self, nodes: list[ast.AST]):
        self.names: set[str] = set()
        calls: set[str] = set()
        for node in (n for top in nodes for n in ast.walk(top)):
            if isinstance(node, ast.Name):
                self.names.add(node.id)
            elif isinstance(node, ast.Attribute):
                self.names.add(node.attr)
            elif isinstance(node, ast.alias):  # `from m import f as g`: a call of g is one of f
                self.names.add(node.name.rpartition(".")[2])
            elif isinstance(node, ast.Call):
                func = node.func
                calls.add(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
        self.trains = "run_loop" in calls or {"backward", "step"} <= calls
        self.places = "job_device" in calls


CALLED_BY_PYTHON = {"__init__", "__post_init__", "__call__", "__enter__", "__exit__", "__iter__", "__next__"}


@cache
def definitions(path: str) -> dict[str, list[Code]]:
    """The file's module-level functions, classes, assigned names and methods, by name (a class also answers for
    the methods Python calls on its own, its constructor say; a script's code runs from its top, under the name
    '')."""
    tree = ast.parse((ROOT / path).read_text(), filename=path)
    found: dict[str, list[Code]] = {}
    if path.startswith("scripts/"):
        found[""] = [Code([tree])]
        return found
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(node.name, []).append(Code([node]))
        elif isinstance(node, ast.ClassDef):
            methods = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
            rest = [s for s in node.body if s not in methods] + node.bases + node.decorator_list
            found.setdefault(node.name, []).append(Code(rest))
            for method in methods:
                code = Code([method])
                found.setdefault(method.name, []).append(code)
                if method.name in CALLED_BY_PYTHON:
                    found[node.name].append(code)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        found.setdefault(name.id, []).append(Code([node.value]))
    return found


def reached(rule: str) -> list[Code]:
    """The code that rule's script reaches through the names it refers to, the script's own first."""
    index: dict[str, list[Code]] = {}
    for path in sorted(RULE_LIBRARY[rule] - {LOOP}):
        for name, codes in definitions(path).items():
            index.setdefault(name, []).extend(codes)
    todo = list(definitions(RULE_SCRIPTS[rule])[""])
    seen_names: set[str] = set()
    found = []
    while todo:
        code = todo.pop()
        found.append(code)
        for name in code.names - seen_names:
            seen_names.add(name)
            todo.extend(index.get(name, ()))
    return found


MAY_TRAIN = re.compile(r"\brun_loop\(|\.backward\(")


@cache
def _may_train(path: str) -> bool:
    return bool(MAY_TRAIN.search((ROOT / path).read_text()))


# a rule none of whose files mentions a backward pass or the loop cannot train: only the others are followed
REACHED = {
    rule: reached(rule)
    for rule, script in RULE_SCRIPTS.items()
    if any(_may_train(f) for f in RULE_LIBRARY[rule] - {LOOP} | {script}) or rule in GPU_RULES
}
TORCH_TRAINING = sorted(rule for rule, codes in REACHED.items() if any(code.trains for code in codes))


def places_on_the_jobs_device(rule: str) -> bool:
    return any(code.places for code in REACHED[rule])


# ---- the tests that run a rule's work on the fake device --------------------------------------------------------


def _marks(func: ast.FunctionDef) -> list[str]:
    names = []
    for decorator in func.decorator_list:
        if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.gpu_rule":
            names += [arg.value for arg in decorator.args if isinstance(arg, ast.Constant)]
    return names


def fake_device_tests() -> dict[str, list[str]]:
    """rule -> the tests marked gpu_rule(rule) whose body, or a function of their module it calls, calls
    fake_gpu()."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        text = path.read_text()
        if "gpu_rule(" not in text:
            continue
        tree = ast.parse(text, filename=str(path))
        funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        calls = [
            {c.func.id for c in ast.walk(f) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)} for f in funcs
        ]
        fakes = {"fake_gpu"}
        while more := {f.name for f, names in zip(funcs, calls) if names & fakes} - fakes:  # the module's helpers
            fakes |= more
        for func, names in zip(funcs, calls):
            for rule in _marks(func):
                if names & fakes:
                    found.setdefault(rule, []).append(f"{path.name}::{func.name}")
    return found


FAKE_DEVICE_TESTS = fake_device_tests()


# ---- the tests ----------------------------------------------------------------------------------------------------


def test_the_profile_asks_for_gpus():
    assert GPU_RULES


def test_the_search_finds_every_rule_that_sets_up_the_shared_loop():
    """The search's check on itself: a script that sets up the loop (LoopSettings) trains."""
    missed = sorted(set(TRAINING_RULES) - set(TORCH_TRAINING))
    assert not missed, f"rules whose scripts set up the shared loop but no training was found: {missed}"


def test_the_search_does_not_take_sampling_or_scoring_for_training():
    """Rules that reach a training module without training are not found (the search follows names, not files)."""
    for rule in ("amortized_ot_predict", "amortized_ot_evaluate", "pred_loss_space_sample", "amortix_sample"):
        assert rule in RULE_SCRIPTS and rule not in TORCH_TRAINING, rule


@pytest.mark.parametrize("rule", TORCH_TRAINING)
def test_a_torch_training_rule_places_its_work_on_the_jobs_device(rule):
    assert places_on_the_jobs_device(rule), (
        f"{rule} trains a torch model but nothing its script reaches calls loop.job_device()"
    )


@pytest.mark.parametrize("rule", TORCH_TRAINING)
def test_a_torch_training_rule_is_run_on_a_fake_device_by_a_test(rule):
    assert rule in FAKE_DEVICE_TESTS, (
        f'{rule} trains a torch model but no test marked @pytest.mark.gpu_rule("{rule}") runs its work under fake_gpu()'
    )


@pytest.mark.parametrize("rule", TORCH_TRAINING)
def test_a_torch_training_rule_gets_a_gpu_or_says_why_not(rule):
    assert rule in GPU_RULES or rule in CPU_TRAINING, (
        f"{rule} trains a torch model: give it a GPU in profiles/slurm or add it to CPU_TRAINING with the reason"
    )


def test_the_cpu_training_rules_are_training_rules_without_a_gpu():
    assert set(CPU_TRAINING) <= set(TORCH_TRAINING), sorted(set(CPU_TRAINING) - set(TORCH_TRAINING))
    assert not set(CPU_TRAINING) & set(GPU_RULES), sorted(set(CPU_TRAINING) & set(GPU_RULES))


@pytest.mark.parametrize("rule", GPU_RULES)
def test_a_gpu_rule_places_its_work_on_the_jobs_device(rule):
    assert rule in RULE_SCRIPTS, f"{rule}: in profiles/slurm but not a rule"
    assert places_on_the_jobs_device(rule), (
        f"{rule} asks for a GPU but nothing its script reaches calls loop.job_device()"
    )


@pytest.mark.parametrize("rule", GPU_RULES)
def test_a_gpu_rule_is_run_on_a_fake_device_by_a_test(rule):
    assert rule in FAKE_DEVICE_TESTS, (
        f'no test marked @pytest.mark.gpu_rule("{rule}") runs {rule}\'s work under fake_gpu()'
    )


def test_every_gpu_rule_mark_names_a_rule():
    assert set(FAKE_DEVICE_TESTS) <= set(RULE_SCRIPTS), sorted(set(FAKE_DEVICE_TESTS) - set(RULE_SCRIPTS))


@pytest.mark.parametrize(
    "rule", sorted(r for r, res in PROFILE["set-resources"].items() if "--signal" in str(res.get("slurm_extra", "")))
)
def test_a_rule_asking_for_sigterm_answers_it_with_a_checkpoint(rule):
    """Slurm's SIGTERM kills a script that does not handle it: only the shared loop's rules ask for it."""
    assert LOOP in library_files(ROOT / RULE_SCRIPTS[rule], ROOT / "src")

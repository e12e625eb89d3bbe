"""Paper 02's netlists, bipartite walks, grammar and electrical-rule check (library only; the pipeline's rules are
not built yet): netlists parse or are refused with file, line and reason; every walk of a circuit crosses every edge
and is accepted by the grammar; the grammar refuses every invalid partial walk of a hand-made set at the token where
it goes wrong; walks the grammar lets terminate pass the independent ERC."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neurips26.analogtobi.erc import erc_level
from neurips26.analogtobi.grammar import State, accepts
from neurips26.analogtobi.netlist import NetlistError, parse
from neurips26.analogtobi.serialize import walk, walk_tokens
from neurips26.analogtobi.tokens import END, Vocabulary

DATA = Path(__file__).parent / "data" / "analogtobi"
OTA = parse((DATA / "ota5t.cir").read_text(), "ota5t.cir")
BANDGAP = parse((DATA / "bandgap.cir").read_text(), "bandgap.cir")


def test_a_netlist_becomes_devices_on_renamed_nets_and_labelled_edges():
    assert [d.name for d in OTA.devices] == ["NM1", "NM2", "PM1", "PM2", "NM3"]
    assert OTA.devices[0].nets == ("NET1", "VIN1", "NET2", "VSS")  # net1 -> NET1, tail -> NET2 (sorted names)
    edges = set(OTA.edges())
    assert ("PM1", "NET1", "M_DG") in edges and ("PM1", "VDD", "M_BS") in edges and ("NM3", "VSS", "M_BS") in edges
    bjt = {(d, n, e) for d, n, e in BANDGAP.edges() if d == "PNP1"}
    assert bjt == {("PNP1", "VSS", "B_BC"), ("PNP1", "NET1", "B_E")}  # the 4th (substrate) net is dropped
    # internal nets by sorted original name: e1 NET1, e2 NET2, g NET3, x NET4
    assert ("DIO1", "NET3", "D_P") in BANDGAP.edges() and ("R2", "VREF1", "R_C") in BANDGAP.edges()


@pytest.mark.parametrize(
    "text, message",
    [
        ("M1 (a b c VSS) nmos4\nJ1 (a b VSS) jfet", ":2: unknown device type 'jfet'"),
        ("M1 (a b VSS) nmos4", ":1: nmos4 M1 has 3 terminals, expected 4"),
        ("M1 (x x VSS VSS) nmos4\nM1 (x x VSS VSS) nmos4", ":2: duplicate device name M1 (first on line 1)"),
        ("M1 (x x VDD VDD) pmos4\nM2 (x x VDD VDD) pmos4", ":0: no VSS net"),
        ("R1 (x x) resistor\nM1 (x x VSS VSS) nmos4", ":1: resistor with both terminals on net X"),
        ("M1 (VOUT float VSS VSS) nmos4", ":0: floating internal net(s) FLOAT"),
        ("this is not a device", ":1: not a device line"),
        ("", ":0: no device"),
    ],
)
def test_bad_netlists_are_refused_with_file_line_and_reason(text, message):
    with pytest.raises(NetlistError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(text, "bad.cir")


def test_duplicate_names_are_renumbered_when_asked_as_in_the_real_data():
    circuit = parse("M1 (x x VSS VSS) nmos4\nM1 (x x VSS VSS) nmos4", duplicate_names="renumber")
    assert [d.name for d in circuit.devices] == ["NM1", "NM2"]


@pytest.mark.parametrize("circuit", [OTA, BANDGAP], ids=["ota", "bandgap"])
@pytest.mark.parametrize("seed", range(5))
def test_every_walk_crosses_every_edge_and_the_grammar_accepts_it(circuit, seed):
    tokens = walk(circuit, np.random.default_rng(seed))
    assert tokens[0] == tokens[-1] == "VSS"
    crossed = {(tokens[i + 2], tokens[i], tokens[i + 1]) for i in range(0, len(tokens) - 2, 4)}
    crossed |= {(tokens[i + 2], tokens[i + 4], tokens[i + 3]) for i in range(0, len(tokens) - 4, 4)}
    assert crossed == set(circuit.edges())
    full = walk_tokens(circuit, "Opamp", np.random.default_rng(seed))
    ok, error = accepts(full)
    assert ok, error
    assert erc_level(full) == 0
    assert accepts(full[1:], typed=False)[0]


# (walk, index of the first token the grammar must refuse)
REJECTS = [
    (["CIRCUIT_Opamp", "VDD"], 1),  # a walk starts at VSS
    (["VSS"], 0),  # a typed walk starts with its type
    (["CIRCUIT_Opamp", "VSS", "NM1"], 2),  # a net is followed by an edge
    (["CIRCUIT_Opamp", "VSS", "M_D", "R1"], 3),  # a MOS edge leads to a MOS device
    (["CIRCUIT_Opamp", "VSS", "M_S", "NM1", "M_S", "NET1"], 5),  # the source is already on VSS
    (["CIRCUIT_Opamp", "VSS", "M_S", "NM1", "M_D", "VSS"], 5),  # (NM1, VSS) is labelled M_S
    (["CIRCUIT_Opamp", "VSS", "M_BS", "NM1", "M_B", "NET1"], 4),  # the bulk is bound: no edge of NM1 holds B again
    (["CIRCUIT_Opamp", "VSS", "R_C", "R1", "R_C", "NET1", "R_C", "R2", "R_C", "VSS", "R_C", "R1", "R_C", "NET2"], 13),
    (["CIRCUIT_Opamp", "VSS", "D_PN"], 2),  # D_NP is the canonical label
    (["CIRCUIT_Opamp", "VSS", END], 2),  # nothing walked yet
    (
        [
            "CIRCUIT_Opamp",
            "VSS",
            "M_BS",
            "NM1",
            "M_D",
            "NET1",
            "M_D",
            "NM1",
            "M_G",
            "VDD",
            "M_G",
            "NM1",
            "M_BS",
            "VSS",
            END,
        ],
        14,
    ),  # NM1 has every pin, but NET1 touches it alone
    (["CIRCUIT_Opamp", "VSS", "M_BS", "NM1", "M_D", "VDD", "M_D", "NM1", "M_BS", "VSS", END], 10),  # NM1 lacks G
    (["CIRCUIT_Opamp", "VSS", "R_C", "R1", "R_C", "VDD", END], 6),  # the walk ends at VSS only
    (["CIRCUIT_Opamp", "VSS", "M_S", "CIRCUIT_Opamp"], 3),  # a type token mid-walk
    (["CIRCUIT_Opamp", "VSS", "R_C", "R1", "R_C", "VDD", "R_C", "R1", "R_C", "VSS", END, "VSS"], 11),  # padding only
    (["CIRCUIT_Opamp", "VSS", "R_C", "R1", "R_C", "NET51"], 5),  # not in the vocabulary
    (["CIRCUIT_Opamp", "VSS", "M_S", "VDD"], 3),  # an edge leads to a device
]


@pytest.mark.parametrize("tokens, index", REJECTS, ids=[f"reject-{i}" for i in range(len(REJECTS))])
def test_the_grammar_refuses_each_invalid_partial_walk_where_it_goes_wrong(tokens, index):
    ok, error = accepts(tokens)
    assert not ok and error.index == index, error


def test_a_complete_walk_may_end_and_then_only_pads():
    tokens = ["CIRCUIT_Opamp", "VSS", "R_C", "R1", "R_C", "VDD", "R_C", "R1", "R_C", "VSS", END, END]
    assert accepts(tokens) == (True, None)


def _sample(rng: np.random.Generator, max_len: int = 160) -> tuple[list[str], bool]:
    """A walk drawn by random logits under the grammar, biased to reuse devices and nets so that walks close."""
    state = State()
    while len(state.tokens) < max_len:
        allowed = state.allowed()
        assert allowed, f"empty mask after {state.tokens}"
        if END in allowed:
            token = END
        else:
            used = [t for t in allowed if t in state.tokens]
            pool = used if used and rng.random() < 0.85 else allowed
            token = pool[rng.integers(len(pool))]
        state.advance(token)
        if token == END:
            return state.tokens, True
    return state.tokens, False


def test_random_walks_under_the_grammar_never_meet_an_empty_mask_and_terminate_valid():
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(20):
        tokens, done = _sample(rng)
        if done:
            finished += 1
            assert erc_level(tokens) == 0, tokens
    assert finished >= 3


@pytest.mark.parametrize(
    "tokens, level",
    [
        (["VSS", "R_C", "R1", "R_C", "VDD", "R_C", "R1", "R_C", "VSS"], 0),
        (["VSS", "R_C", "R1", "R_C"], 1),
        (["VSS", "M_D", "R1", "R_C", "VSS"], 1),
        (["VSS", "M_S", "NM1", "M_D", "VSS"], 3),
        (["VSS", "M_BS", "NM1", "M_D", "VDD", "M_D", "NM1", "M_BS", "VSS"], 2),
        (["VSS", "R_C", "R1", "R_C", "NET1", "R_C", "R1", "R_C", "VSS"], 4),
    ],
)
def test_the_erc_names_the_first_failing_level(tokens, level):
    assert erc_level(tokens) == level


def test_the_vocabulary_is_the_papers_size():
    vocab = Vocabulary.bipartite()
    assert len(vocab) == len(set(vocab.tokens)) and "B_B" in vocab and "D_PN" not in vocab
    assert 380 <= len(vocab) <= 400


def test_the_generator_gives_distinct_parsable_circuits_and_the_same_ones_for_the_same_seed():
    from itertools import combinations

    from neurips26.analogtobi.generate import FAMILIES, generate, graph_of, isomorphic

    weights = {name: 1.0 for name in FAMILIES}
    first = generate(40, weights, seed=3)
    again = generate(40, weights, seed=3)
    assert [text for _, text, _ in first] == [text for _, text, _ in again]
    assert len(first) == 40 and {family for family, _, _ in first} == set(weights)
    graphs = [graph_of(c) for _, _, c in first]
    assert not any(isomorphic(a, b) for a, b in combinations(graphs, 2))  # brute force: no duplicate topology
    for family, _, circuit in first:
        tokens = walk_tokens(circuit, family, np.random.default_rng(0))
        assert accepts(tokens)[0] and erc_level(tokens) == 0
    with pytest.raises(ValueError, match="unknown circuit families"):
        generate(5, {"Teleporter": 1.0}, seed=0)


def test_digital_circuits_are_named_as_such_before_parsing():
    from neurips26.analogtobi.netlist import digital_reason

    assert digital_reason("MM1 (a VCLK1 VSS VSS) nmos4") == "digital net VCLK1"
    assert digital_reason("I0 (a b VDD VSS) inverter") == "digital device inverter"
    assert digital_reason((DATA / "ota5t.cir").read_text()) == ""


def _brute_allowed(state):
    """The grammar's definition (module docstring of grammar.py) by exhaustive admissibility checks."""
    from neurips26.analogtobi.tokens import DEVICE_CAPS, EDGES, edge_family, kind_of, split_device

    t = state.tokens
    devices = [f"{f}{i}" for f, cap in DEVICE_CAPS.items() for i in range(1, cap + 1)]
    nets = state.vocab.nets
    last = t[-1]
    if kind_of(last) == "net":
        out = [e for e in EDGES if any(state._adm(d, e, last) for d in devices)]
        return out + (["TRUNCATE"] if last == "VSS" and state.net_visits > 1 and state.complete() else [])
    if kind_of(last) == "edge" and kind_of(t[-2]) == "net":
        return [d for d in devices if state._adm(d, last, t[-2])]
    if kind_of(last) == "edge":
        return [n for n in nets if state._adm(t[-2], last, n)]
    family = split_device(last)[0]
    return [e for e in EDGES if family in edge_family(e) and any(state._adm(last, e, n) for n in nets)]


def test_the_fast_allowed_sets_equal_the_exhaustive_definition_along_random_grammar_walks():
    import numpy as np

    from neurips26.analogtobi.grammar import State

    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(6):
        state = State()
        state.advance("CIRCUIT_Opamp")
        state.advance("VSS")
        for _ in range(120):
            allowed = state.allowed()
            assert sorted(allowed) == sorted(_brute_allowed(state)), state.tokens[-3:]
            checked += 1
            if allowed == ["TRUNCATE"] or state.tokens[-1] == "TRUNCATE":
                break
            state.advance(allowed[rng.integers(len(allowed))])
    assert checked > 300

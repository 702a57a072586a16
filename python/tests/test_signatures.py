"""What help() shows is the call the runtime takes: every constructor and function has
a real signature (no `**settings`, no Ellipsis default), each keyword it lists is accepted at the
default it shows (which is the core's, `DEFAULT_*`) with the same result as leaving it out, and
every keyword another constructor lists but it does not is a TypeError. The stubs list the same
keywords with the same defaults (`mypy.stubtest`, run by `make test-python`)."""

import inspect
import socket
import time

import pytest

import polyflake
from polyflake import MonotonicSnowflake, Snowflake, UlidGenerator, Uuid7Generator
from polyflake.testing import ManualClock, ScriptedClock

from conftest import CUSTOM_EPOCH_MS

#: What each constructor's settings read back as (a generator made with every keyword at its
#: shown default must read the same as one made with none).
SETTINGS = ("epoch_ms", "layout", "max_wait_ms", "max_lead_ms", "max_forward_step_ms", "forward_confirm_ms",
            "mode", "clock_source", "node_source", "max_clock_error_ms")


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# name: (callable, positional arguments); the remote stores on a loopback port nobody listens on.
CONSTRUCTORS = {
    "Snowflake": (Snowflake, (612,)),
    "MonotonicSnowflake": (MonotonicSnowflake, (612,)),
    "Snowflake.from_env": (Snowflake.from_env, ("POLYFLAKE_SIG_NODE",)),
    "MonotonicSnowflake.from_env": (MonotonicSnowflake.from_env, ("POLYFLAKE_SIG_NODE",)),
    "Snowflake.from_hostname": (Snowflake.from_hostname, ("ids-613",)),
    "Snowflake.from_ipv4": (Snowflake.from_ipv4, ("10.1.7.9", 22)),
    "Snowflake.from_file_lease": (Snowflake.from_file_lease, None),
    "MonotonicSnowflake.from_file_lease": (MonotonicSnowflake.from_file_lease, None),
    "Snowflake.from_etcd": (Snowflake.from_etcd, None),
    "Snowflake.from_zookeeper": (Snowflake.from_zookeeper, None),
    "Uuid7Generator": (Uuid7Generator, ()),
    "UlidGenerator": (UlidGenerator, ()),
}
REMOTE = {"Snowflake.from_etcd": lambda: f"http://127.0.0.1:{closed_port()}",
          "Snowflake.from_zookeeper": lambda: f"127.0.0.1:{closed_port()}"}


def params(f):
    return inspect.signature(f).parameters


def keywords(f):
    return {n: p.default for n, p in params(f).items() if p.kind is inspect.Parameter.KEYWORD_ONLY}


def public_callables():
    for name in polyflake.__all__:
        obj = getattr(polyflake, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            continue
        if isinstance(obj, type):
            for attr in ("__new__", *(a for a in vars(obj) if not a.startswith("_"))):
                member = getattr(obj, attr) if attr != "__new__" else obj
                if callable(member):
                    yield f"{name}.{attr}", member
        elif callable(obj):
            yield name, obj
    for cls in (ManualClock, ScriptedClock):
        yield cls.__name__, cls


@pytest.mark.parametrize("name,f", list(public_callables()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_callable_has_a_real_signature(name, f):
    if name in ("Health.__new__", "LeaseHealth.__new__", "ClockSync.__new__"):  # from health() only
        with pytest.raises(TypeError):
            f()
        return
    sig = inspect.signature(f)
    for p in sig.parameters.values():
        assert p.kind is not inspect.Parameter.VAR_KEYWORD, f"{name}{sig}"
        assert p.default is not Ellipsis, f"{name}{sig}"
    assert "Ellipsis" not in str(sig) and "..." not in str(sig)


def test_help_shows_the_keywords_and_their_defaults():
    text = inspect.getdoc(Snowflake) or ""
    shown = str(inspect.signature(Snowflake))
    assert shown == ("(node_id, *, epoch_ms=1704067200000, layout=None, max_wait_ms=5.0, "
                     "max_forward_step_ms=60000, forward_confirm_ms=300000, clock=None, clock_source=None, "
                     "max_clock_error_ms=None, restart_guard=None, state_dir=None, host_scope=None)")
    assert str(inspect.signature(MonotonicSnowflake)).endswith(
        "clock_source=None, max_lead_ms=5000, max_clock_error_ms=None, restart_guard=None, state_dir=None, "
        "host_scope=None)")
    assert "strict generator" in text
    assert str(inspect.signature(polyflake.decode)) == "(id, /, *, layout=None, epoch_ms=1704067200000)"
    assert inspect.signature(Snowflake.decode) == inspect.signature(polyflake.decode)


def test_defaults_shown_are_the_cores():
    core = {
        "epoch_ms": polyflake.DEFAULT_EPOCH_MS, "max_wait_ms": polyflake.DEFAULT_MAX_WAIT_MS,
        "max_forward_step_ms": polyflake.DEFAULT_MAX_FORWARD_STEP_MS,
        "forward_confirm_ms": polyflake.DEFAULT_FORWARD_CONFIRM_MS, "reserve_ms": polyflake.DEFAULT_RESERVE_MS,
        "max_guard_wait_ms": polyflake.DEFAULT_MAX_GUARD_WAIT_MS, "max_lead_ms": polyflake.DEFAULT_MAX_LEAD_MS,
    }
    # Left to the core or the environment: no bound on the kernel's error (reported, never a
    # reason to refuse), POLYFLAKE_RESTART_GUARD / _STATE_DIR / _HOST_SCOPE.
    unset = {"max_clock_error_ms", "restart_guard", "state_dir", "host_scope"}
    for name, (f, _) in CONSTRUCTORS.items():
        for key, default in keywords(f).items():
            if key in core:
                assert default == core[key] and type(default) is type(core[key]), (name, key)
            if key in unset:
                assert default is None, (name, key)
            if key == "heal":  # the core's LeaseCommon default: a lost lease stays lost
                assert default is False, name
        assert ("heal" in keywords(f)) == ("lease" in name or name.endswith(("etcd", "zookeeper"))), name
    assert polyflake.DEFAULT_MAX_LEAD_MS == 5000 and polyflake.DEFAULT_MAX_RESTART_WAIT_MS == 10_000
    g = Snowflake(1, clock=ManualClock(CUSTOM_EPOCH_MS))
    assert (g.epoch_ms, g.max_wait_ms, g.max_forward_step_ms, g.forward_confirm_ms, g.max_lead_ms,
            g.max_clock_error_ms) == (1704067200000, 5.0, 60000, 300000, 5000, None)


def make(name, tmp_path, monkeypatch, **kwargs):
    f, args = CONSTRUCTORS[name]
    monkeypatch.setenv("POLYFLAKE_SIG_NODE", "614")
    if name in REMOTE:
        # Every keyword passes the binding: the call gets as far as the store, which is not there.
        started = time.monotonic()
        with pytest.raises(polyflake.LeaseStore):
            f(REMOTE[name](), **kwargs)
        assert time.monotonic() - started < 10
        return None
    if args is None:
        args = (tmp_path / f"lease-{len(kwargs)}",)
    return f(*args, **kwargs)


@pytest.mark.parametrize("name", CONSTRUCTORS)
def test_each_keyword_at_its_shown_default_is_as_if_absent(name, tmp_path, monkeypatch):
    f, _ = CONSTRUCTORS[name]
    defaults = keywords(f)
    assert defaults, name
    read = []
    for kwargs in (defaults, {}):
        g = make(name, tmp_path, monkeypatch, **kwargs)
        if g is None:
            continue
        with g:  # closed before the next one takes the same node id
            read.append((type(g), {a: getattr(g, a) for a in SETTINGS if hasattr(g, a)}))
    assert read == [] if name in REMOTE else read[0] == read[1]


@pytest.mark.parametrize("name", CONSTRUCTORS)
def test_keywords_not_listed_are_refused(name, tmp_path, monkeypatch):
    f, _ = CONSTRUCTORS[name]
    everyone = {}
    for other, _ in CONSTRUCTORS.values():
        everyone.update(keywords(other))
    listed = keywords(f)
    others = {k: v for k, v in everyone.items() if k not in listed}
    for key, value in {**others, "no_such_setting": 1}.items():
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{key}'"):
            make(name, tmp_path, monkeypatch, **{key: value})


def test_max_lead_ms_is_monotonic_modes():
    # Listed by the lease and time-ID constructors (which make either mode): its shown default
    # (the core's, 5000) and None are taken anywhere, any other bound is refused in strict mode,
    # with a hint.
    assert "max_lead_ms" not in keywords(Snowflake) and keywords(MonotonicSnowflake)["max_lead_ms"] == 5000
    Uuid7Generator(max_lead_ms=None).close()
    Uuid7Generator(max_lead_ms=5000).close()
    with pytest.raises(TypeError, match="monotonic generator's setting"):
        Uuid7Generator(max_lead_ms=5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_lead_ms'"):
        Snowflake(1, max_lead_ms=None)
    assert Uuid7Generator(mode="monotonic", max_lead_ms=5).mode == "monotonic"
    m = MonotonicSnowflake(615, clock=ManualClock(CUSTOM_EPOCH_MS), max_lead_ms=None)
    assert m.max_lead_ms is None  # None set explicitly: unbounded


def test_restart_guard_keywords_are_a_fixed_node_ids(tmp_path):
    # A lease keeps its own restart guard: the mark's keywords are refused there, with a hint;
    # its slot is claimed host-wide, so it takes host_scope.
    assert {"restart_guard", "state_dir", "host_scope"} <= keywords(Snowflake.from_env).keys()
    assert "restart_guard" not in keywords(Snowflake.from_file_lease)
    assert keywords(Snowflake.from_file_lease)["host_scope"] is None
    with pytest.raises(TypeError, match="a fixed node id's setting"):
        Snowflake.from_file_lease(tmp_path, restart_guard="off")
    with pytest.raises(TypeError, match="unexpected keyword argument 'state_dir'"):
        Uuid7Generator(state_dir=tmp_path)
    # Bad values echo what was sent.
    with pytest.raises(polyflake.InvalidArgument, match='"yes" is not a restart guard'):
        Snowflake(616, restart_guard="yes")
    with pytest.raises(TypeError, match="restart_guard"):
        Snowflake(616, restart_guard=True)
    with pytest.raises(TypeError, match="state_dir must be a str or an os.PathLike"):
        Snowflake(616, state_dir=b"/tmp")
    with pytest.raises(polyflake.InvalidArgument, match='"two words"'):
        Snowflake(616, host_scope="two words")
    with pytest.raises(polyflake.InvalidArgument, match="at most 40 bytes"):
        Snowflake.from_file_lease(tmp_path, host_scope="x" * 41)
    for bad in (0, 16_001, -1, 2**64):
        with pytest.raises(polyflake.InvalidArgument, match=str(bad)):
            Snowflake(616, max_clock_error_ms=bad)
    with pytest.raises(polyflake.InvalidArgument, match="injected clock"):
        Uuid7Generator(clock=ManualClock(CUSTOM_EPOCH_MS), max_clock_error_ms=100)
    # A path object for the state directory, the guard "required": the mark is there.
    g = Snowflake(616, state_dir=tmp_path, restart_guard="required", host_scope="sig-test")
    assert g.health().lease.store.startswith(str(tmp_path)) and g.health().lease.store.endswith("-sig-test")
    g.close()


def test_clock_source_none_is_the_precise_reading():
    clock = ManualClock(CUSTOM_EPOCH_MS)
    assert Snowflake(1, clock=clock, clock_source=None).clock_source == "precise"
    assert Snowflake(2, clock="coarse", clock_source=None).clock_source in ("coarse", "precise")
    with pytest.raises(TypeError):
        Snowflake(3, clock="coarse", clock_source="precise")

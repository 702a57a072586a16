"""The quiet faults, each reproduced through Python as an adversarial user would meet it: a slot
file (or the whole lease directory) deleted under a live holder while a second process leases
the slot, a forked child that closes its inherited descriptors and leases again, a fork during a
batch then close() in the child, close() with a live multiprocessing worker, records that do not
parse, forward clock steps, a poisoned slot, a second ID space on one store; and the same-input
table of bad node sources. Every rule is the core's: these check that Python reaches it."""

import array
import fcntl
import json
import multiprocessing
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

import polyflake
from polyflake import MonotonicSnowflake, Snowflake
from polyflake.testing import ManualClock

from conftest import CUSTOM_EPOCH_MS, VECTORS, load_json

HOLDER = os.path.join(os.path.dirname(__file__), "lease_holder.py")
YEAR_MS = 31_536_000_000
PIPE_END = 1023  # above what a closing child closes


def now_ms():
    return time.time_ns() // 1_000_000


def lease(d, test, **kw):
    """A file lease whose epoch is this test's own (the store of each test is its own ID space)."""
    return Snowflake.from_file_lease(d, epoch_ms=CUSTOM_EPOCH_MS + test, **kw)


def old_record(slot, owner, hwm):
    """A complete slot record as polyflake's previous version wrote it (no checksum), padded to
    256 bytes: R = `hwm`."""
    t = f"polyflake-slot v1\nslot={slot}\nowner={owner}\nhigh_water_ms={hwm}\n".ljust(255) + "\n"
    return t.encode()


def locked(path):
    """True when someone holds an exclusive lock on `path` (a shared lock is refused)."""
    with open(path, "rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


def read_ids(path):
    ids = array.array("q")
    with open(path, "rb") as f:
        ids.frombytes(f.read())
    return ids


# -- 1. A slot file (or the directory) deleted under a live holder ----------------------------


def holder(lease_dir, out, ms):
    # Each holder claims its node id in a host scope of its own: the fault under test is the
    # store's (two holders of one slot file), which the host-wide claim would otherwise keep
    # from happening on one host.
    scope = f"{os.environ.get('POLYFLAKE_HOST_SCOPE', '')[:30]}-{pathlib.Path(out).stem}"
    p = subprocess.Popen([sys.executable, HOLDER, str(lease_dir), str(out), str(ms)],
                         stdout=subprocess.PIPE, text=True, env={**os.environ, "POLYFLAKE_HOST_SCOPE": scope})
    return p, p.stdout.readline().strip()


@pytest.mark.parametrize("remove", ["slot file", "directory"])
def test_a_deleted_slot_under_a_live_holder_loses_the_lease_and_repeats_nothing(tmp_path, remove):
    store = tmp_path / "leases"
    a, a_first = holder(store, tmp_path / "a.bin", 4000)
    assert a_first == "NODE 0"
    time.sleep(0.3)
    if remove == "slot file":
        os.unlink(store / "slot-0000")
    else:
        shutil.rmtree(store)
    b, b_first = holder(store, tmp_path / "b.bin", 1500)
    assert b_first == "NODE 0", "the successor took slot 0"
    b_end, a_end = b.communicate(timeout=60)[0].strip(), a.communicate(timeout=60)[0].strip()
    assert a.returncode == 0 and b.returncode == 0
    ids_a, ids_b = read_ids(tmp_path / "a.bin"), read_ids(tmp_path / "b.bin")
    assert len(ids_a) > 10_000 and len(ids_b) > 10_000, "both issued"
    dups = len(set(ids_a) & set(ids_b))
    assert dups == 0, f"{dups} IDs issued by both holders of slot 0"
    assert a_end == "END LEASE_LOST lease_lost", "the first holder stopped"
    assert b_end == "END OK ok"
    assert min(ids_b) > max(ids_a), "the successor starts past everything the first issued"


# -- 1b. A lost lease that heals (heal=True) and one that does not (the default) ---------------


def mint_through(g, ids, seconds):
    """Call next_id for `seconds`, keeping every ID in `ids`; return the refusals' names."""
    refused = set()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            ids.append(g.next_id())
        except (polyflake.LeaseLost, polyflake.LeaseNotReady) as e:
            refused.add(type(e).__name__)
            time.sleep(0.005)
    return refused


def test_a_deleted_slot_file_heals_with_heal_on(tmp_path):
    g = lease(tmp_path, 10, slots=2, reserve_ms=500, heal=True)
    g.wait_ready(timeout_ms=5000)
    ids = [g.next_id() for _ in range(5000)]
    old = g.node_id
    issued_before = g.health().ids_issued
    assert issued_before >= len(ids)
    os.unlink(tmp_path / f"slot-{old:04d}")
    # Lost within a renewal (reserve / 5), then a new slot behind its guard (about one reserve):
    # calls in between are refused, never answered with an ID of the lost slot.
    statuses = set()
    end = time.monotonic() + 10
    while time.monotonic() < end and not statuses & {"lease_lost", "restart_guard"}:
        statuses.add(g.health().status)
        mint_through(g, ids, 0.01)
    assert statuses & {"lease_lost", "restart_guard"}, statuses
    started = time.monotonic()
    g.wait_ready(timeout_ms=10_000)  # waits through the heal (heal off: LeaseLost at once)
    assert time.monotonic() - started < 5
    h = g.health()
    assert h.status == "ok" and h.lease.slot == g.node_id and not h.lease.lost, h.to_dict()
    before_after = len(ids)
    ids += [g.next_id() for _ in range(5000)]
    assert {g.decode(x)["node_id"] for x in ids[before_after:]} == {g.node_id}
    assert (tmp_path / f"slot-{g.node_id:04d}").exists()
    dups = len(ids) - len(set(ids))
    assert dups == 0, f"{dups} IDs repeated across the heal"
    assert sorted(ids) == ids, "the new slot issues past everything the lost one issued"
    # The same generator: its counters go on.
    assert g.health().ids_issued >= len(ids) > issued_before
    g.close()


def test_a_deleted_slot_file_stays_lost_with_heal_off(tmp_path):
    g = lease(tmp_path, 11, slots=2, reserve_ms=500)  # heal=False, the default
    g.wait_ready(timeout_ms=5000)
    ids = [g.next_id() for _ in range(1000)]
    os.unlink(tmp_path / f"slot-{g.node_id:04d}")
    refused = mint_through(g, ids, 1.5)
    assert refused == {"LeaseLost"}, refused
    for _ in range(2):
        assert g.health().status == "lease_lost"
        with pytest.raises(polyflake.LeaseLost):
            g.next_id()
        started = time.monotonic()
        with pytest.raises(polyflake.LeaseLost):
            g.wait_ready(timeout_ms=5000)  # at once: nothing will come back
        assert time.monotonic() - started < 1
        time.sleep(1)
    assert len(ids) == len(set(ids))
    g.close()


def test_heal_takes_a_bool():
    for bad in (1, "yes", None):
        with pytest.raises(TypeError, match="heal must be a bool"):
            Snowflake.from_file_lease("/nonexistent-polyflake-dir", heal=bad)


# -- 2-4. Fork faults -----------------------------------------------------------------------


def fork_child(body, timeout_s=30):
    """Fork; the child runs body() and sends back its JSON through a pipe on PIPE_END (above
    what a closing child closes), then _exit(0); a hang or an error fails the test."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(r)
            os.dup2(w, PIPE_END)
            os.close(w)
            signal.alarm(timeout_s)  # a hang in the child ends it
            out = json.dumps(body()).encode()
            os.write(PIPE_END, out)
            code = 0
        except BaseException as e:  # noqa: BLE001 - reported through the exit code and stderr
            sys.stderr.write(f"child: {e!r}\n")
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child failed: {status}"
    return json.loads(text)


def test_a_child_that_closes_inherited_descriptors_and_leases_again(tmp_path):
    """Daemonizing code closes every inherited descriptor; the child then makes its own lease
    generator G2 (whose slot file may get the number the parent's had) and uses the inherited
    generator G, which re-leases. G must not close or unlock anything of G2's, nor a log file
    the child opened on a reused number."""
    g = lease(tmp_path, 1, slots=4, reserve_ms=200)
    g.wait_ready()
    parent_node = g.node_id
    parent_ids = list(g.next_ids(1000))
    log_path = tmp_path / "child.log"

    def child():
        os.closerange(3, PIPE_END)  # what python-daemon, Celery's detach and closerange() do
        g2 = lease(tmp_path, 1, slots=4, reserve_ms=200)
        g2.wait_ready()
        g2_slot = tmp_path / f"slot-{g2.node_id:04d}"
        log = open(log_path, "w")
        g.wait_ready()  # the inherited generator takes its own fresh slot now
        ids = [g.next_id() for _ in range(1000)] + [g2.next_id() for _ in range(1000)]
        assert locked(g2_slot), "G2's slot was unlocked"
        renewals = g2.health().lease_renewals
        deadline = time.monotonic() + 5
        while g2.health().lease_renewals <= renewals + 2:
            assert time.monotonic() < deadline, "G2 stopped renewing"
            time.sleep(0.02)
        h2 = g2.health()
        assert h2.ok and not h2.lease.lost, h2
        nodes = [g.node_id, g2.node_id]
        g.close()  # closes nothing of the child's
        log.write("still open\n")
        log.flush()
        log.close()
        assert locked(g2_slot)
        ids += [g2.next_id() for _ in range(1000)]
        return {"nodes": nodes, "ids": ids}

    out = fork_child(child)
    parent_ids += list(g.next_ids(1000))
    assert len({parent_node, *out["nodes"]}) == 3, ("three holders, three slots", out["nodes"])
    every = parent_ids + out["ids"]
    assert len(every) == 5000 and len(set(every)) == 5000
    assert log_path.read_text() == "still open\n"
    assert g.health().ok and locked(tmp_path / f"slot-{parent_node:04d}")
    g.close()


def test_fork_during_a_batch_then_close_in_the_child(tmp_path):
    """A thread loops on next_ids(1_000_000) while the main thread forks: in the child next_id
    works, and close() or leaving a `with` block returns (nothing is inherited held)."""
    # A reserve of 1 s: each child's renewal thread must move R before the clock reaches it,
    # and on the shared 2-core machine (load 10 and more) a 200 ms reserve was once outrun,
    # so the child's next_id was a correct LeaseExpired instead of the ID this test is about.
    g = lease(tmp_path, 2, slots=8, reserve_ms=1000)
    g.wait_ready()
    stop = threading.Event()

    def batches():
        while not stop.is_set():
            g.next_ids(1_000_000)

    t = threading.Thread(target=batches)
    t.start()
    try:
        time.sleep(0.1)
        for k in range(4):

            def child():
                if k % 2:
                    with g:
                        g.wait_ready(5000)
                        first = g.next_id()
                else:
                    g.wait_ready(5000)
                    first = g.next_id()
                    g.close()
                with pytest.raises(polyflake.GeneratorClosed):
                    g.next_id()
                return first

            assert fork_child(child, timeout_s=20) > 0
            time.sleep(0.05)
    finally:
        stop.set()
        t.join()
    g.close()


def _sleep(seconds):
    time.sleep(seconds)


def test_close_frees_the_slot_while_a_multiprocessing_worker_lives(tmp_path):
    g = lease(tmp_path, 3, slots=1, reserve_ms=200)
    g.wait_ready()
    g.next_id()
    worker = multiprocessing.get_context("fork").Process(target=_sleep, args=(30,))
    worker.start()
    try:
        g.close()
        again = lease(tmp_path, 3, slots=1, reserve_ms=200)  # not NoFreeSlot
        assert again.node_id == 0 and worker.is_alive()
        again.close()
    finally:
        worker.kill()
        worker.join()


# -- 5. Records that do not parse -------------------------------------------------------------

BAD_UTF8 = bytearray(old_record(0, "h", "17"))
BAD_UTF8[20] = 0xFF
RECORDS = {
    "bad UTF-8": bytes(BAD_UTF8),
    "truncated": b"polyflake-slot v1\nslot=0\nowner=h\nhigh_water_ms=17",
    "NUL bytes": bytes(256),
    "duplicated key": (
        "polyflake-slot v1\nslot=0\nowner=h\nhigh_water_ms=17\nhigh_water_ms=18\n".ljust(255) + "\n"
    ).encode(),
    "overflowing number": old_record(0, "h", "9223372036854775808"),
    "empty": b"",
}


@pytest.mark.parametrize("what", list(RECORDS))
def test_a_record_that_does_not_parse_gives_a_full_reserve_never_a_small_r(tmp_path, what):
    reserve = 800
    (tmp_path / "slot-0000").write_bytes(RECORDS[what])
    before = now_ms()
    with lease(tmp_path, 4, slots=1, reserve_ms=reserve) as g:
        guard = g.health().lease.guard_until_ms
        assert before + reserve <= guard <= now_ms() + reserve, f"guard {guard - now_ms()} ms ahead"
        with pytest.raises(polyflake.LeaseNotReady):
            g.next_id()
    # One unreadable record never fails the whole directory.
    (tmp_path / "slot-0000").write_bytes(RECORDS[what])
    with lease(tmp_path, 4, slots=16, reserve_ms=50) as other:
        other.wait_ready()
        assert other.next_id() > 0


def test_a_mark_past_the_window_leaves_that_slot_unused(tmp_path):
    """i64::MAX parses, but lies past every layout's window: that slot is refused, never wrapped,
    and only that slot."""
    (tmp_path / "slot-0000").write_bytes(old_record(0, "h", "9223372036854775807"))
    with pytest.raises(polyflake.NoFreeSlot):
        lease(tmp_path, 5, slots=1, reserve_ms=100)
    g = lease(tmp_path, 5, slots=2, reserve_ms=100)
    assert g.node_id == 1
    g.close()


# -- 6. Forward clock steps -------------------------------------------------------------------


def test_a_forward_step_is_refused_then_corrected_within_the_window():
    clock = ManualClock(CUSTOM_EPOCH_MS + 1_000_000)
    g = Snowflake(1, clock=clock)
    before = g.next_id()
    clock.advance(YEAR_MS)  # a bad NTP server
    with pytest.raises(polyflake.ClockJumpedAhead) as info:
        g.next_id()
    assert isinstance(info.value, RuntimeError) and info.value.code == "CLOCK_JUMPED_AHEAD"
    assert info.value.max_forward_step_ms == polyflake.DEFAULT_MAX_FORWARD_STEP_MS
    h = g.health()
    assert (h.ok, h.status) == (False, "clock_ahead")
    assert YEAR_MS <= h.clock_ahead_ms < YEAR_MS + 1000 and h.forward_refused >= 1
    clock.elapse(30_000)  # half a minute later the clock is corrected
    clock.advance(-YEAR_MS)
    after = g.next_id()
    assert after > before and g.decode(after)["epoch_ms"] < CUSTOM_EPOCH_MS + 1_060_000
    assert g.health().ok
    clock.advance(59_000)  # a step within the bound is a step like any other
    g.next_id()


def test_a_forward_step_that_persists_is_believed_after_forward_confirm_ms():
    clock = ManualClock(CUSTOM_EPOCH_MS + 1_000_000)
    g = Snowflake(2, clock=clock, max_forward_step_ms=1000, forward_confirm_ms=10_000)
    assert (g.max_forward_step_ms, g.forward_confirm_ms) == (1000, 10_000)
    g.next_id()
    clock.advance(3_600_000)  # a real correction of an hour
    with pytest.raises(polyflake.ClockJumpedAhead):
        g.next_id()
    clock.elapse(9_999)
    with pytest.raises(polyflake.ClockJumpedAhead) as info:
        g.next_id()
    assert info.value.confirm_remaining_ms == 1
    clock.elapse(1)
    assert g.decode(g.next_id())["epoch_ms"] == clock.now_ms()
    assert g.health().ok


def test_a_suspend_is_elapsed_time_not_a_step_and_the_check_can_be_turned_off():
    clock = ManualClock(CUSTOM_EPOCH_MS + 1_000_000)
    g = Snowflake(3, clock=clock)
    g.next_id()
    clock.elapse(8 * 3_600_000)  # CLOCK_BOOTTIME counts a suspend: both clocks move
    assert g.decode(g.next_id())["epoch_ms"] == clock.now_ms()
    off = Snowflake(4, clock=clock, max_forward_step_ms=None)
    assert off.max_forward_step_ms is None
    off.next_id()
    clock.advance(YEAR_MS)
    off.next_id()


def test_monotonic_mode_issues_from_trusted_time_through_a_step():
    t = CUSTOM_EPOCH_MS + 1_000_000
    clock = ManualClock(t)
    m = MonotonicSnowflake(5, clock=clock)
    m.next_id()
    clock.advance(YEAR_MS)
    ids = m.next_ids(10_000)
    assert m.decode(ids[-1])["epoch_ms"] < t + 10, "monotonic followed the step"
    h = m.health()
    assert h.ok and h.clock_ahead_ms >= YEAR_MS


@pytest.mark.parametrize("bad", [0, -5, 2**64, "60000"])
def test_forward_settings_out_of_range_are_refused(bad):
    exc = TypeError if isinstance(bad, str) else polyflake.InvalidArgument
    for key in ("max_forward_step_ms", "forward_confirm_ms"):
        if bad == 0 and key == "forward_confirm_ms":
            continue  # 0: believe a persisting step at once
        with pytest.raises(exc, match=key):
            Snowflake(6, clock=ManualClock(CUSTOM_EPOCH_MS), **{key: bad})


def test_a_lease_does_not_move_r_to_a_forward_step_and_its_successor_is_not_poisoned(tmp_path):
    """The issue's reproduction: file lease, one slot, reserve 1 s, a manual clock stepped a year
    ahead while the renewal runs, then corrected."""
    t = now_ms()
    clock = ManualClock(t)
    g = Snowflake.from_file_lease(tmp_path, slots=1, reserve_ms=1000, clock=clock)
    clock.elapse(1001)  # past the new slot's guard
    g.next_id()
    renewals = g.health().lease.renewals
    clock.advance(YEAR_MS)
    # The background renewals (every reserve / 5) read the stepped clock: wait until two more
    # have run (up to 10 s) rather than sleep 0.5 s, which a loaded machine can pass with none
    # (and then R could not have followed the step whatever the code did).
    deadline = time.monotonic() + 10
    while g.health().lease.renewals < renewals + 2:
        assert time.monotonic() < deadline, "the renewal thread stopped"
        time.sleep(0.01)
    r = g.health().lease.high_water_ms
    assert r < t + 10_000, f"R followed the step: {r - t} ms ahead"
    record = (tmp_path / "slot-0000").read_text()
    assert f"high_water_ms={r}\n" in record
    with pytest.raises(polyflake.ClockJumpedAhead):
        g.next_id()
    clock.advance(-YEAR_MS)
    last = g.next_id()
    g.close()
    # The successor on the slot waits only past what was really issued.
    succ = Snowflake.from_file_lease(tmp_path, slots=1, reserve_ms=1000, clock=clock)
    assert succ.health().lease.guard_until_ms == Snowflake.decode(last)["epoch_ms"]
    clock.elapse(1)
    assert succ.next_id() > last
    succ.close()


# -- 6 (slot choice). A poisoned slot ----------------------------------------------------------


def test_a_poisoned_slot_is_skipped_while_another_is_free(tmp_path):
    (tmp_path / "slot-0000").write_bytes(old_record(0, "h", now_ms() + YEAR_MS))
    g = lease(tmp_path, 7, slots=2, reserve_ms=100)
    assert g.node_id == 1, "the free slot with a short guard comes first"
    # With slot 1 held, the poisoned slot is the only one left: taken, and health says why.
    last = lease(tmp_path, 7, slots=2, reserve_ms=100)
    assert last.node_id == 0
    h = last.health()
    assert h.status == "restart_guard" and h.lease.phase == "restart_guard"
    assert "max_guard_wait_ms" in h.lease.guard_note and "max_guard_wait_ms" in h.reason
    g.close()
    last.close()


# -- 7. One store, one ID space ---------------------------------------------------------------


def test_a_store_serves_one_id_space(tmp_path):
    a = lease(tmp_path, 8, slots=4, reserve_ms=100)
    with pytest.raises(polyflake.IdSpaceMismatch) as info:
        lease(tmp_path, 8, slots=4, reserve_ms=100, layout="41/12/10")
    e = info.value
    assert isinstance(e, ValueError) and e.code == "ID_SPACE_MISMATCH"
    assert "41/10/12" in e.store_space and "41/12/10" in e.our_space and str(tmp_path) in e.store
    assert "41/10/12" in str(e) and "41/12/10" in str(e)
    with pytest.raises(polyflake.IdSpaceMismatch):
        lease(tmp_path, 9, slots=4, reserve_ms=100)  # another epoch
    a.close()
    with pytest.raises(polyflake.IdSpaceMismatch):  # the store keeps its space when nobody holds it
        MonotonicSnowflake.from_file_lease(tmp_path, epoch_ms=CUSTOM_EPOCH_MS + 9)


# -- one behaviour per input ----------------------------------------------------------------------

BAD_SOURCES = load_json(VECTORS / "bad_node_sources.json")["cases"]


@pytest.mark.parametrize("case", BAD_SOURCES, ids=[c["name"] for c in BAD_SOURCES])
def test_bad_node_sources_give_the_cores_code_and_message(tmp_path, case):
    src = dict(case["source"])
    kind = src.pop("kind")
    with pytest.raises(polyflake.PolyflakeError) as info:
        if kind == "ipv4":
            Snowflake.from_ipv4(src["address"], src["prefix_len"], clock=ManualClock(CUSTOM_EPOCH_MS))
        else:
            assert kind == "file_lease" and src.pop("dir") == "TMP", case
            Snowflake.from_file_lease(tmp_path, **src)
    assert (info.value.code, str(info.value)) == (case["error"], case["message"])

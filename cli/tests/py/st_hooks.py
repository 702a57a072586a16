"""Schemathesis hooks for `polyflake serve` (loaded through SCHEMATHESIS_HOOKS=st_hooks).

- A check that every ID handed out during the whole run is unique: the IDs of every 200 answer
  to POST /v1/ids (64-bit IDs, UUIDv7s and ULIDs) are remembered with the answer they came in;
  one ID in two different answers fails the run. Every 64-bit ID seen is also appended to the
  file named by ST_IDS_LOG, so the pytest driver can count them and compare with the service's
  own counter (which counts the 64-bit generator's IDs).

Bodies go out as schemathesis generates them: `{"count": 3664.0}` is valid by the schema (JSON
Schema's integer is any number whose value has no fractional part) and the service reads it as
3664 (it used to refuse it, and a hook here rewrote such numbers as integers, hiding the
disagreement from the positive_data_acceptance check).
"""

import json
import os
import threading

import schemathesis

_lock = threading.Lock()
# ID -> the answer object it came in. The answers are kept alive, so id() is never reused while
# the run lasts; a check re-run on the same answer (shrinking, replay) is not a duplicate.
_seen: dict[int, int] = {}
_answers: dict[int, object] = {}


@schemathesis.check
def ids_are_unique_across_the_run(ctx, response, case):
    """Fail when an ID comes back in two different answers of POST /v1/ids."""
    if case.method.upper() != "POST" or case.path != "/v1/ids" or response.status_code != 200:
        return None
    body = json.loads(response.content)
    # 64-bit IDs by value; UUIDv7s and ULIDs (`"format"` in the answer) by their text, which the
    # service writes in one canonical form.
    fmt = body.get("format", "snowflake")
    ids = [int(x) if fmt == "snowflake" else (fmt, x) for x in body["ids"]]
    with _lock:
        key = id(response)
        for i in ids:
            if _seen.setdefault(i, key) != key:
                raise AssertionError(f"ID {i} was handed out twice (in two different answers)")
        if key not in _answers:
            _answers[key] = response
            log = os.environ.get("ST_IDS_LOG")
            if log and fmt == "snowflake":
                with open(log, "a", encoding="utf-8") as f:
                    f.write("".join(f"{i}\n" for i in ids))
    return None

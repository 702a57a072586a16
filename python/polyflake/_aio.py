"""The thread half of the async forms (``anext_id``, ``anext_ids``): a call that would wait runs
in the default executor, as ``asyncio.to_thread`` runs it. When the task awaiting it is
cancelled (``task.cancel()``, ``asyncio.wait_for``'s timeout), the call's cancel flag is set: its
wait stops within 20 ms (the call raises ``Interrupted`` in its thread, having issued nothing)
instead of keeping an executor thread for the rest of its wait."""

import asyncio


async def in_thread(call, cancel, *args):
    """``await asyncio.to_thread(call, *args, cancel)``, setting ``cancel`` if cancelled."""
    try:
        return await asyncio.to_thread(call, *args, cancel)
    except asyncio.CancelledError:
        cancel.set()
        raise

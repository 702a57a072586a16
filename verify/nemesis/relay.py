"""A TCP relay on 127.0.0.1 for the nemesis run's ambiguous writes: bytes pass both ways until
`stall(True)`, after which they are held (read and kept, or left in the socket) until
`stall(False)`, then delivered in order. A request sent meanwhile times out at its sender and is
applied late by the store: the sender no longer knows whether it landed (an ambiguous write).
The Python twin of core/tests/lease_support/relay.rs's stall (the silence mode is not needed).
"""

from __future__ import annotations

import socket
import threading


class Relay:
    """Listens on a free loopback port and relays every connection to 127.0.0.1:`target`."""

    def __init__(self, target: int):
        self.target = target
        self.flowing = threading.Event()
        self.flowing.set()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def stall(self, on: bool) -> None:
        if on:
            self.flowing.clear()
        else:
            self.flowing.set()

    def close(self) -> None:
        self.closed = True
        self.flowing.set()
        try:
            self.listener.close()
        except OSError:
            pass

    def _accept(self) -> None:
        while not self.closed:
            try:
                inbound, _ = self.listener.accept()
            except OSError:
                return
            try:
                outbound = socket.create_connection(("127.0.0.1", self.target), timeout=2)
                outbound.settimeout(None)
            except OSError:  # the store is down: the holder sees a closed connection
                inbound.close()
                continue
            for a, b in ((inbound, outbound), (outbound, inbound)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                break
            if not data:
                break
            # A stalled link: hold what was read (and leave the rest in the socket) until the
            # stall ends, then deliver it in order.
            self.flowing.wait()
            try:
                dst.sendall(data)
            except OSError:
                break
        for s in (dst, src):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        try:
            src.close()
        except OSError:
            pass

"""Point-to-point for mcl.torch, as Gloo gives it: messages between two
ranks match by tag (in order within a tag), a receive may take any source,
and a posted receive never holds up a send (irecv before isend on both
sides of a pair is fine).

Each direction between two ranks gets a 2-rank mcl communicator of its
own, made the first time it is needed (the sender makes its unique id and
puts it in the group's store). The sender's thread sends each message as an
envelope (tag, byte count) and then the bytes; the receiver's thread always
takes the next message: straight into the buffer of a receive waiting for
it, or into a stash that a later receive copies from. While idle, the
sender says so every third of the timeout, so the receiver's wait for the
next envelope never runs into the communicator's timeout. Every wait of a
caller is bounded by the group's timeout."""

from __future__ import annotations

import atexit
import collections
import datetime
import threading
import time
import weakref
from typing import Callable, Deque, Dict, List, Optional, Tuple

import numpy as np
import torch
from torch.futures import Future

import mcl

from ._torch_args import BackendError, as_bytes, backend_error

# An envelope with this tag carries nothing: the sender is alive and idle.
_IDLE = -(2**62)
# A link nobody took a message from for this long is drained by its thread.
_DRAIN_AFTER = 0.5
# An envelope with this tag is the last: the sender's group is closing.
_BYE = _IDLE + 1
# How long a closing group waits for its peers' last envelopes before it
# aborts the links still waiting (an abort is logged as a failure).
_BYE_WAIT = 0.5
# Guards the making of a transfer's future against its completion.
_FUTURES = threading.Lock()
# How often a link with no communicator yet looks in the store for one.
_STORE_POLL = datetime.timedelta(seconds=1)


class Transfer:
    """One send or receive: done (with the sender's rank for a receive) or
    failed, seen by the caller's wait and by torch's future."""

    def __init__(self, what: str, timeout_seconds: float) -> None:
        self.what = what
        self.timeout_seconds = timeout_seconds
        self._future: Optional[Future] = None  # made when asked for
        self.source: Optional[int] = None
        # Held until the transfer ends: waiters acquire it (a bare lock
        # costs a fraction of an Event, made per message).
        self._pending = threading.Lock()
        self._pending.acquire()
        self._finished = False
        self._error: Optional[BaseException] = None
        # Takes the transfer back when its wait runs out: what to say, or
        # None when it is under way already (see wait).
        self.withdraw: Callable[[], Optional[str]] = lambda: None
        # Runs on success, before anyone hears of it (a copy back).
        self.after: Optional[Callable[[], None]] = None
        # Does the waiting until the deadline, when the caller takes part.
        self.waiter: Optional[Callable[[float], None]] = None

    def finish(self, source: Optional[int] = None,
               error: Optional[BaseException] = None) -> None:
        if self._finished:
            return
        if error is None and self.after is not None:
            try:
                self.after()
            except BaseException as e:  # noqa: BLE001 (the waiter gets it)
                error = e
        with _FUTURES:
            if self._finished:
                return
            self.source, self._error = source, error
            self._finished = True
            self._pending.release()
            future = self._future
        if future is not None:
            self._settle(future)

    @property
    def future(self) -> Future:
        """torch's future of the transfer (few ask: made on demand)."""
        with _FUTURES:
            if self._future is None:
                self._future = Future()
                if self._finished:
                    self._settle(self._future)
            return self._future

    def _settle(self, future: Future) -> None:
        if self._error is None:
            future.set_result([])
        else:
            future.set_exception(self._error)

    def _await(self, timeout: float) -> bool:
        """Whether the transfer ended within `timeout` s (-1: no bound)."""
        if self._finished:
            return True
        if self._pending.acquire(timeout=timeout):
            self._pending.release()
            return True
        return self._finished

    def done(self) -> bool:
        return self._finished

    def failed(self) -> Optional[BaseException]:
        return self._error

    def wait(self) -> None:
        """Waits up to the group's timeout; then the transfer is withdrawn
        and fails, or, when it is under way already, the wait goes on (its
        communicator's timeout bounds it)."""
        deadline = time.monotonic() + self.timeout_seconds
        if self.waiter is not None:
            self.waiter(deadline)
        if not self._await(max(0.0, deadline - time.monotonic())):
            detail = self.withdraw()
            if detail is not None:
                self.finish(error=BackendError(
                    f"mcl backend: {self.what}: Timed out after "
                    f"{self.timeout_seconds:g} s (the group's timeout)"
                    f"{detail}"))
            self._await(-1)
        if self._error is not None:
            raise self._error


class _Receive:
    """A receive waiting for its message."""

    def __init__(self, buffer, source: Optional[int], tag: int,
                 transfer: Transfer, caller_drains: bool) -> None:
        self.buffer = buffer  # flat uint8 view of the caller's tensor
        self.source = source  # None: any
        self.tag = tag
        self.transfer = transfer
        # The caller waits for it at once and takes messages itself.
        self.caller_drains = caller_drains

    def takes(self, source: int, tag: int) -> bool:
        return tag == self.tag and self.source in (None, source)


def _size_error(what: str, source: int, tag: int, sent: int,
                wanted: int) -> BackendError:
    return BackendError(
        f"mcl backend: {what}: rank {source} sent {sent} bytes with tag "
        f"{tag}; this receive takes {wanted} bytes (the message is dropped)")


class _Envelope:
    """The first message of every send: tag and byte count, and the bytes
    themselves when they fit (one message instead of two). NumPy, not
    torch: a few microseconds less per message."""

    BYTES = 1024
    INLINE = BYTES - 16

    def __init__(self) -> None:
        self.buffer = np.zeros(self.BYTES, dtype=np.uint8)
        self.header = self.buffer[:16].view(np.int64)

    def fill(self, tag: int, payload) -> bool:
        """Sets the envelope for `payload` (flat uint8); True when it
        carries it."""
        size = payload.numel()
        self.header[0] = tag
        self.header[1] = size
        if size > self.INLINE:
            return False
        if size:
            self.buffer[16:16 + size] = payload.numpy()
        return True

    def read(self) -> Tuple[int, int]:
        return int(self.header[0]), int(self.header[1])

    def copy_inline(self, size: int, into) -> None:
        if size:
            into.numpy()[:] = self.buffer[16:16 + size]

    def inline(self, size: int):
        return torch.from_numpy(self.buffer[16:16 + size].copy())


class _Outgoing:
    """Sends to one peer, in issue order: on the caller's thread when the
    link is open and idle (no hand-over between threads), else on the
    thread of this link, which also opens the link and says it is alive
    while idle."""

    def __init__(self, engine: "P2PEngine", peer: int) -> None:
        self.engine, self.peer = engine, peer
        self.queue: Deque[Tuple[object, int, Transfer]] = collections.deque()
        self.ready = threading.Condition()  # guards queue, error, comm
        self.sending = threading.Lock()  # held while a message goes out
        self.error: Optional[BaseException] = None
        self.comm = None
        self.envelope = _Envelope()
        self.last_sent = time.monotonic()
        self.thread = threading.Thread(
            target=self._run, name=f"mcl-torch-send-{peer}", daemon=True)
        self.thread.start()

    def put(self, payload, tag: int, transfer: Transfer,
            direct: bool) -> None:
        """Sends `payload`; at once on this thread when `direct` and the
        link is open and idle, else through the queue."""
        with self.ready:
            if self.error is not None:
                transfer.finish(error=self.error)
                return
            now = (direct and not self.queue and self.comm is not None
                   and self.sending.acquire(blocking=False))
            if not now:
                self.queue.append((payload, tag, transfer))
                self.ready.notify()
                return
        try:
            self._transmit(payload, tag)
        except BaseException as e:  # noqa: BLE001 (this caller gets it)
            self._fail(e)
            transfer.finish(error=self.error)
            return
        finally:
            self.sending.release()
        transfer.finish()

    def withdraw(self, transfer: Transfer) -> Optional[str]:
        """A send not started yet leaves the queue."""
        with self.ready:
            for item in self.queue:
                if item[2] is transfer:
                    self.queue.remove(item)
                    return (f": rank {self.peer} has not joined this pair's "
                            "point-to-point link (it has not received from "
                            "this rank yet)" if self.comm is None else "")
        return None

    def wake(self) -> None:
        with self.ready:
            self.ready.notify()

    def say_bye(self) -> None:
        """The last envelope, when the link is open and free (best
        effort: the peer learns the group closed, not that it failed)."""
        with self.ready:
            usable = self.comm is not None and self.error is None
        if usable and self.sending.acquire(timeout=_BYE_WAIT):
            try:
                self._transmit(torch.empty(0, dtype=torch.uint8), _BYE)
            except BaseException:  # noqa: BLE001 (closing anyway)
                pass
            finally:
                self.sending.release()

    def _transmit(self, payload, tag: int) -> None:
        """One message (the `sending` lock held)."""
        if not self.envelope.fill(tag, payload):
            self.comm.send(self.envelope.buffer, 1)
            self.comm.send(payload, 1)
        else:
            self.comm.send(self.envelope.buffer, 1)
        self.last_sent = time.monotonic()

    def _fail(self, error: BaseException) -> None:
        """The link is broken: every queued send fails with `error`."""
        error = backend_error(error, f"send to rank {self.peer}",
                              self.engine.timeout_seconds)
        with self.ready:
            if self.error is None:
                self.error = error
            failed, self.queue = list(self.queue), collections.deque()
        for _, _, transfer in failed:
            transfer.finish(error=self.error)

    def _run(self) -> None:
        engine = self.engine
        nothing = torch.empty(0, dtype=torch.uint8)
        try:
            comm = engine.open_link(engine.rank, self.peer, sending=True)
            with self.ready:
                self.comm = comm
            idle_every = max(0.05, engine.timeout_seconds / 3)
            while not engine.closing:
                with self.ready:
                    if not self.queue:
                        self.ready.wait(max(0.0, idle_every - (
                            time.monotonic() - self.last_sent)))
                    if engine.closing:
                        return
                with self.sending:
                    with self.ready:
                        item = self.queue.popleft() if self.queue else None
                    if item is not None:
                        self._transmit(item[0], item[1])
                    elif time.monotonic() - self.last_sent >= idle_every:
                        self._transmit(nothing, _IDLE)
                if item is not None:
                    item[2].finish()
        except BaseException as e:  # noqa: BLE001 (every waiter gets it)
            if not engine.closing:
                self._fail(e)


class _Incoming:
    """Receives from one peer, one message at a time, by whoever holds the
    link's token: the caller of a receive that waits for it (no hand-over
    between threads), or this link's thread, which drains for receives
    nobody waits on yet (irecv, any source) and whenever no caller took a
    message for half a second (so a sender never waits long for room, and
    the peer's 'alive' messages do not pile up)."""

    def __init__(self, engine: "P2PEngine", peer: int) -> None:
        self.engine, self.peer = engine, peer
        self.comm = None
        self.error: Optional[BaseException] = None
        self.token = threading.Lock()
        self.peer_closed = False
        self.envelope = _Envelope()
        self.last_drained = time.monotonic()
        self.thread = threading.Thread(
            target=self._run, name=f"mcl-torch-recv-{peer}", daemon=True)
        self.thread.start()

    def usable(self) -> bool:
        return self.comm is not None and self.error is None

    def drain_one(self) -> None:
        """Takes the next message (the token held); a broken link fails
        the receives that needed it."""
        engine = self.engine
        try:
            self.comm.recv(self.envelope.buffer, 0)
            self.last_drained = time.monotonic()
            tag, size = self.envelope.read()
            if tag == _BYE:
                self.peer_closed = True
                engine.link_failed(self, BackendError(
                    f"mcl backend: recv from rank {self.peer}: rank "
                    f"{self.peer} closed its point-to-point links (its "
                    "process group was destroyed or its process ended)"))
            elif tag != _IDLE:
                self._take(tag, size, self.envelope)
        except BaseException as e:  # noqa: BLE001 (every waiter gets it)
            if not engine.closing:
                engine.link_failed(self, backend_error(
                    e, f"recv from rank {self.peer}", engine.timeout_seconds))
        finally:
            engine.changed()

    def _run(self) -> None:
        engine = self.engine
        try:
            comm = engine.open_link(self.peer, engine.rank, sending=False)
        except BaseException as e:  # noqa: BLE001 (every waiter gets it)
            if not engine.closing:
                engine.link_failed(self, backend_error(
                    e, f"recv from rank {self.peer}", engine.timeout_seconds))
            return
        if comm is None:  # closing
            return
        with engine.cond:
            self.comm = comm
        engine.changed()
        # The link is never left undrained for longer than this: a sender
        # then waits at most this long for room, and the peer's 'alive'
        # messages never pile up.
        idle_after = min(_DRAIN_AFTER, engine.timeout_seconds / 3)
        while not engine.closing and self.error is None and \
                not self.peer_closed:
            with engine.cond:
                idle = time.monotonic() - self.last_drained
                if not engine.needs_thread(self.peer) and idle < idle_after:
                    engine.cond.wait(idle_after - idle)
                    continue
            if self.token.acquire(timeout=idle_after):
                try:
                    if not engine.closing:
                        self.drain_one()
                finally:
                    self.token.release()

    def _take(self, tag: int, size: int, envelope: _Envelope) -> None:
        engine = self.engine
        inline = size <= _Envelope.INLINE
        receive = engine.claim(self.peer, tag)
        if receive is not None and receive.buffer.numel() == size:
            if inline:
                envelope.copy_inline(size, receive.buffer)
            else:
                self.comm.recv(receive.buffer, 0)
            receive.transfer.finish(source=self.peer)
            return
        if inline:
            data = envelope.inline(size)
        else:
            data = torch.empty(size, dtype=torch.uint8)
            self.comm.recv(data, 0)
        if receive is not None:
            receive.transfer.finish(error=_size_error(
                receive.transfer.what, self.peer, tag, size,
                receive.buffer.numel()))
            return
        engine.arrived(self.peer, tag, data)


class P2PEngine:
    """The point-to-point traffic of one process group."""

    _all: "weakref.WeakSet[P2PEngine]" = weakref.WeakSet()

    def __init__(self, store, seal, rank: int, size: int,
                 timeout_seconds: float) -> None:
        self.store, self.rank, self.size = store, rank, size
        # The links' ids go into the store sealed as the group's did.
        self.seal = seal
        self.timeout_seconds = timeout_seconds
        self.closing = False
        self._lock = threading.Lock()
        # Wakes the links' threads: a receive they must drain for was
        # posted, a link opened, or the group closes.
        self.cond = threading.Condition(self._lock)
        # Wakes callers that wait for a link's thread to take their message
        # (only when some do: a wake-up per message costs tens of
        # microseconds of the other core).
        self._progress = threading.Condition(self._lock)
        self._callers_waiting = 0
        self._outgoing: Dict[int, _Outgoing] = {}
        self._incoming: Dict[int, _Incoming] = {}
        self._posted: List[_Receive] = []
        # Messages no receive took yet: (arrival number, source, tag, bytes).
        self._stash: List[Tuple[int, int, int, torch.Tensor]] = []
        self._arrivals = 0
        self._comms: List[object] = []
        self._ids: List[mcl.UniqueId] = []
        P2PEngine._all.add(self)

    # -- the caller's side ---------------------------------------------------

    def send(self, payload, peer: int, tag: int, waits: bool) -> Transfer:
        """Sends `payload`; on the caller's thread when it `waits` for
        the send and the link is idle (an isend never blocks its caller,
        even when the peer takes its time to receive)."""
        transfer = Transfer(f"send to rank {peer} (tag {tag})",
                            self.timeout_seconds)
        transfer.withdraw = lambda: link.withdraw(transfer)
        with self._lock:
            self._check_open()
            link = self._outgoing.get(peer)
            if link is None:
                link = self._outgoing[peer] = _Outgoing(self, peer)
        data = as_bytes(payload)
        link.put(data, tag, transfer, direct=waits)
        return transfer

    def recv(self, buffer, source: Optional[int], tag: int, waits: bool,
             after: Optional[Callable[[], None]] = None) -> Transfer:
        """Receives into `buffer`. When the caller `waits` for a message
        from one rank, its wait takes the messages itself."""
        what = (f"recv from rank {source}" if source is not None
                else "recv from any rank") + f" (tag {tag})"
        transfer = Transfer(what, self.timeout_seconds)
        transfer.after = after
        caller_drains = waits and source is not None
        receive = _Receive(as_bytes(buffer), source, tag, transfer,
                           caller_drains)
        if caller_drains:
            transfer.waiter = lambda deadline: self._drain_for(
                receive, deadline)
        with self._lock:
            self._check_open()
            for peer in ([source] if source is not None else
                         [p for p in range(self.size) if p != self.rank]):
                if peer not in self._incoming:
                    self._incoming[peer] = _Incoming(self, peer)
            found = next((m for m in self._stash
                          if receive.takes(m[1], m[2])), None)
            if found is not None:
                self._stash.remove(found)
            else:
                broken = self._broken_for(receive)
                if broken is None:
                    self._posted.append(receive)
                    if not caller_drains:  # a link's thread takes it
                        self.cond.notify_all()
        if found is not None:
            _, peer, _, data = found
            if data.numel() != receive.buffer.numel():
                transfer.finish(error=_size_error(
                    what, peer, tag, data.numel(), receive.buffer.numel()))
            else:
                receive.buffer.copy_(data)
                transfer.finish(source=peer)
        elif broken is not None:
            transfer.finish(error=broken)
        transfer.withdraw = lambda: self._withdraw(receive)
        return transfer

    def _drain_for(self, receive: _Receive, deadline: float) -> None:
        """The wait of a caller for its receive from one rank: it takes
        the link's messages itself while the link is free (each wait for
        the next message is short: the peer says it is alive every third
        of the timeout), else waits for the link's thread to."""
        transfer = receive.transfer
        link = self._incoming[receive.source]
        while not transfer.done() and time.monotonic() < deadline:
            if link.usable() and link.token.acquire(blocking=False):
                try:
                    if not transfer.done() and not self.closing:
                        link.drain_one()
                finally:
                    link.token.release()
                continue
            with self._lock:
                if not transfer.done():
                    self._callers_waiting += 1
                    try:
                        self._progress.wait(min(0.05, max(
                            0.0, deadline - time.monotonic())))
                    finally:
                        self._callers_waiting -= 1

    def changed(self) -> None:
        """A message was taken or a link changed: callers waiting for a
        link's thread look again."""
        with self._lock:
            if self._callers_waiting:
                self._progress.notify_all()

    def needs_thread(self, peer: int) -> bool:
        """Whether a posted receive that no caller drains for could take a
        message from `peer` (lock held)."""
        return any(not r.caller_drains and r.source in (None, peer)
                   for r in self._posted)

    # -- the links' side -----------------------------------------------------

    def claim(self, source: int, tag: int) -> Optional[_Receive]:
        """The first waiting receive that takes this message, taken off
        the list (its buffer is filled next)."""
        with self._lock:
            receive = next((r for r in self._posted if r.takes(source, tag)),
                           None)
            if receive is not None:
                self._posted.remove(receive)
            return receive

    def arrived(self, source: int, tag: int, data) -> None:
        """A message that no receive waited for when it came: to the
        first that waits now, else to the stash."""
        receive = self.claim(source, tag)
        if receive is None:
            with self._lock:
                self._arrivals += 1
                self._stash.append((self._arrivals, source, tag, data))
            return
        if data.numel() != receive.buffer.numel():
            receive.transfer.finish(error=_size_error(
                receive.transfer.what, source, tag, data.numel(),
                receive.buffer.numel()))
            return
        receive.buffer.copy_(data)
        receive.transfer.finish(source=source)

    def link_failed(self, link: _Incoming, error: BaseException) -> None:
        """Receives that only this link could satisfy fail with its error."""
        with self._lock:
            link.error = error
            failing = [r for r in self._posted
                       if self._broken_for(r) is not None]
            for r in failing:
                self._posted.remove(r)
        for r in failing:
            r.transfer.finish(error=error)

    def open_link(self, sender: int, receiver: int,
                  sending: bool) -> Optional[object]:
        """The 2-rank communicator of messages from `sender` to
        `receiver` (sender rank 0, receiver rank 1). None when the group
        closes first."""
        key = f"mcl/p2p/{sender}-{receiver}"
        # Idle for longer than this, the link says so (see module doc).
        timeout = max(1, int(self.timeout_seconds))
        if sending:
            unique_id = mcl.UniqueId()
            with self._lock:
                self._ids.append(unique_id)  # its rendezvous runs here
            self.store.set(key, self.seal.seal(str(unique_id)))
            text = str(unique_id)
        else:
            while True:
                if self.closing:
                    return None
                try:
                    self.store.wait([key], _STORE_POLL)
                    break
                except RuntimeError:  # not there yet
                    continue
            text = self.seal.open(self.store.get(key).decode())
        comm = mcl.init(0 if sending else 1, 2, text, timeout=timeout,
                        name=f"torch-p2p-{sender}-{receiver}")
        with self._lock:
            self._comms.append(comm)
            if self.closing:
                comm.abort()
        return comm

    # -- both ----------------------------------------------------------------

    def close(self) -> None:
        """Ends every link: each peer gets a last envelope; a link still
        waiting for its peer's after a moment is aborted, which ends the
        wait."""
        with self._lock:
            if self.closing:
                return
            self.closing = True
            outgoing = list(self._outgoing.values())
            incoming = list(self._incoming.values())
            posted, self._posted = self._posted, []
            self.cond.notify_all()
            self._progress.notify_all()
        for link in outgoing:
            link.say_bye()
            link.wake()
        deadline = time.monotonic() + _BYE_WAIT
        while time.monotonic() < deadline and any(
                link.token.locked() and not link.peer_closed
                for link in incoming):
            time.sleep(0.01)
        for link in incoming:
            if link.token.locked() and link.comm is not None:
                link.comm.abort()
        for link in outgoing:
            if link.sending.locked() and link.comm is not None:
                link.comm.abort()
        for link in outgoing + incoming:
            link.thread.join(timeout=5)
        with self._lock:
            comms = list(self._comms)
        for comm in comms:
            comm.close()
        for r in posted:
            r.transfer.finish(error=BackendError(
                f"mcl backend: {r.transfer.what}: the process group was "
                "destroyed"))

    def _check_open(self) -> None:
        if self.closing:
            raise BackendError("mcl backend: the process group was destroyed")

    def _broken_for(self, receive: _Receive) -> Optional[BaseException]:
        """The error of a receive no live link can satisfy (lock held)."""
        if receive.source is not None:
            link = self._incoming.get(receive.source)
            return None if link is None else link.error
        errors = [self._incoming[p].error for p in range(self.size)
                  if p != self.rank and p in self._incoming]
        if len(errors) == self.size - 1 and None not in errors:
            return errors[0]
        return None

    def _withdraw(self, receive: _Receive) -> Optional[str]:
        """A receive whose wait ran out leaves the list, saying what did
        come; None when its message is being received already."""
        with self._lock:
            if receive not in self._posted:
                return None
            self._posted.remove(receive)
            waiting = sorted({(m[1], m[2]) for m in self._stash})
        if not waiting:
            return ": no message came"
        said = ", ".join(f"tag {t} from rank {s}" for s, t in waiting)
        return f": no message with tag {receive.tag} came (waiting: {said})"


@atexit.register
def _close_engines() -> None:
    """The links' threads end before the interpreter does: one still in a
    wait when Python stops would be frozen inside mcl."""
    for engine in list(P2PEngine._all):
        engine.close()

"""How mcl.torch hands the unique id to every rank through torch's store
without handing its secret to whoever else can read the store (a TCPStore
takes connections from anyone who reaches MASTER_ADDR:MASTER_PORT; a
FileStore's file is often readable by other users).

Every unique id of a group (its communicator's, and those of the links its
sends and receives make later) goes into the store sealed under the
group's key (BLAKE2b keystream over a fresh salt, BLAKE2b tag), so only
holders of the key can take it and a changed entry is refused. The key:
- MCL_SECRET, set the same on every rank;
- else, when every rank of the group runs on one host (they say which in
  the store; an answer anyone could fake only decides who tries): a random
  key rank 0 leaves in a file only this user can read, as mcl's own
  single-host rendezvous does (mode 0600 in a private directory). Each rank
  tells rank 0 whether it could read it, so a rank that could not (another
  host after all, another user) fails init on every rank, naming it;
- else, only where the user said the store is private
  (``mcl.torch.allow_secret_in_store()``): the ids as they are;
- else init refuses, saying how to choose."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import socket
import sys
import threading
from typing import Optional

_allowed = False
_FORM = "mcl-sealed1"
_REFUSED = "mcl-refused:"  # rank 0 refused: the others fail at once too
_ONE_HOST = "mcl-one-host1:"  # rank 0's key is in a private file
_KEY = "mcl/unique_id"
_VERDICT = "mcl/one_host_verdict"


def allow_secret_in_store(allowed: bool = True) -> None:
    """Lets mcl.torch put the unique id, secret included, in torch's
    store: for stores nobody else can read (a FileStore in a directory
    only you can enter, a launcher's private store). Without it, and
    without MCL_SECRET, a group whose ranks are on several hosts refuses
    at init."""
    global _allowed
    _allowed = bool(allowed)


def _job_secret() -> Optional[bytes]:
    text = os.environ.get("MCL_SECRET", "")
    if not text:
        return None
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) != 16:
        raise ValueError("MCL_SECRET is not a secret of 32 hex digits")
    return secret


def _stream(secret: bytes, salt: bytes, length: int) -> bytes:
    out = b""
    block = 0
    while len(out) < length:
        out += hashlib.blake2b(salt + block.to_bytes(4, "big"), key=secret,
                               person=b"mcl-torch-id-ks").digest()
        block += 1
    return out[:length]


def _tag(secret: bytes, salt: bytes, sealed: bytes) -> bytes:
    return hashlib.blake2b(salt + sealed, key=secret, digest_size=32,
                           person=b"mcl-torch-id-tg").digest()


class StoreSeal:
    """How one group's unique ids go into its store and come out: sealed
    under `key`, or (key None: the user declared the store private) as
    they are. `whose` names the key in errors."""

    def __init__(self, key: Optional[bytes], whose: str) -> None:
        self.key = key
        self.whose = whose

    def seal(self, unique_id: str) -> str:
        if self.key is None:
            return unique_id
        salt = secrets.token_bytes(16)
        plain = unique_id.encode()
        sealed = bytes(a ^ b for a, b in
                       zip(plain, _stream(self.key, salt, len(plain))))
        return ":".join([_FORM, salt.hex(), sealed.hex(),
                         _tag(self.key, salt, sealed).hex()])

    def open(self, value: str) -> str:
        if value.startswith(_REFUSED):
            raise PermissionError("rank 0: " + value[len(_REFUSED):])
        if not value.startswith(_FORM + ":"):
            if self.key is not None:
                raise PermissionError(
                    f"mcl.torch: this rank has {self.whose} but rank 0 put "
                    "the unique id in the store unsealed: set MCL_SECRET on "
                    "every rank")
            return value
        if self.key is None:
            raise PermissionError(
                "mcl.torch: rank 0 sealed the unique id with MCL_SECRET, "
                "which is not set here: set the same MCL_SECRET on every "
                "rank")
        _, salt_hex, sealed_hex, tag_hex = value.split(":")
        salt, sealed = bytes.fromhex(salt_hex), bytes.fromhex(sealed_hex)
        if not hmac.compare_digest(_tag(self.key, salt, sealed),
                                   bytes.fromhex(tag_hex)):
            raise PermissionError(
                "mcl.torch: the unique id in the store was not sealed with "
                f"this rank's {self.whose} (a different MCL_SECRET than rank "
                "0's, or the store entry was changed)")
        return bytes(a ^ b for a, b in
                     zip(sealed, _stream(self.key, salt,
                                         len(sealed)))).decode()


def _refusal(others: str = "") -> str:
    where = (f" ({others} not on rank 0's host, so the one-host secret "
             "cannot reach them)") if others else ""
    return (
        "mcl.torch: the communicator's secret would go into torch's store, "
        f"which others who reach it can read{where} (a TCPStore takes anyone "
        "who reaches MASTER_ADDR:MASTER_PORT): set MCL_SECRET to the same 32 "
        "hex digits on every rank (e.g. from `openssl rand -hex 16`), or, "
        "for a store only you can read, call "
        "mcl.torch.allow_secret_in_store() before init_process_group")


def _host_identity() -> str:
    """This host, as the ranks compare it: its name and what tells two
    machines (or boots) of one name apart."""
    name = socket.gethostname()
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return name + "/" + f.read().strip()
    except OSError:
        pass
    if sys.platform == "darwin":
        import ctypes
        import ctypes.util
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        buf = ctypes.create_string_buffer(64)
        size = ctypes.c_size_t(len(buf))
        if libc.sysctlbyname(b"kern.uuid", buf, ctypes.byref(size),
                             None, ctypes.c_size_t(0)) == 0:
            return name + "/" + buf.value.decode()
    return name


def _private_directory() -> str:
    """Where the one-host key goes: XDG_RUNTIME_DIR, or TMPDIR where it is
    this user's own, else /tmp/mcl-<uid> (made 0700), as mcl's core."""
    def private(path: str) -> bool:
        try:
            st = os.lstat(path)
        except OSError:
            return False
        import stat
        return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
                and st.st_mode & 0o077 == 0)
    for name in ("XDG_RUNTIME_DIR", "TMPDIR"):
        path = os.environ.get(name, "")
        if path.startswith("/") and private(path):
            return path
    path = f"/tmp/mcl-{os.geteuid()}"
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    if not private(path):
        raise PermissionError(
            f"mcl.torch: {path} is not a directory private to this user "
            f"(uid {os.geteuid()}): another user may have made it to read "
            "the group's one-host secret. Remove it, or set MCL_SECRET on "
            "every rank")
    return path


def _write_key(path: str, key: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                 0o600)
    try:
        os.write(fd, key)
    finally:
        os.close(fd)


def _read_key(path: str) -> bytes:
    """The key rank 0 left at path, once its file is seen to be this
    user's and nobody else's to read."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o077:
            raise PermissionError(
                f"mcl.torch: the one-host secret file {path} is not private "
                f"to this user (owner uid {st.st_uid}, mode "
                f"{st.st_mode & 0o777:03o}): refusing it; set MCL_SECRET on "
                "every rank")
        key = os.read(fd, 64)
    finally:
        os.close(fd)
    if len(key) != 16:
        raise PermissionError(f"mcl.torch: the one-host secret file {path} "
                              "is not one")
    return key


_said_once = threading.Lock()
_said = False


def _say_once(text: str) -> None:
    """One INFO line, in mcl's log format, where MCL_DEBUG asks for INFO."""
    global _said
    level = os.environ.get("MCL_DEBUG", "WARN").upper()
    with _said_once:
        if _said or level not in ("INFO", "TRACE"):
            return
        _said = True
    sys.stderr.write(f"{socket.gethostname()}:{os.getpid()}:0 MCL INFO "
                     f"{text}\n")


def _ask(store, key: str) -> str:
    return store.get(key).decode()


def meet(store, rank: int, size: int, unique_id: Optional[str]) -> tuple:
    """The group's handshake in its store: rank 0 (which passes its
    unique id) puts it there sealed; every rank gets the group's seal and
    (ranks other than 0) the id. Raises PermissionError on every rank when
    the id's secret cannot travel safely, naming why."""
    key = _job_secret()
    if key is not None:
        return _meet_sealed(store, rank, StoreSeal(key, "MCL_SECRET"),
                            unique_id)
    store.set(f"mcl/host/{rank}", _host_identity())
    if rank == 0:
        return _lead_without_secret(store, size, unique_id)
    return _follow_without_secret(store, rank)


def _meet_sealed(store, rank, seal, unique_id):
    if rank == 0:
        store.set(_KEY, seal.seal(unique_id))
        return seal, unique_id
    return seal, seal.open(_ask(store, _KEY))


def _lead_without_secret(store, size, unique_id):
    here = _ask(store, "mcl/host/0")
    others = [r for r in range(1, size)
              if _ask(store, f"mcl/host/{r}") != here]
    if not others:
        return _lead_one_host(store, size, unique_id)
    if _allowed:
        store.set(_KEY, unique_id)
        return StoreSeal(None, "no key"), unique_id
    listed = ", ".join(str(r) for r in others)
    refusal = _refusal(f"rank{'s' if len(others) > 1 else ''} {listed}")
    store.set(_KEY, _REFUSED + refusal)
    raise PermissionError(refusal)


def _lead_one_host(store, size, unique_id):
    key = secrets.token_bytes(16)
    path = os.path.join(_private_directory(),
                        f"mcl-torch-secret-{secrets.token_hex(8)}")
    _write_key(path, key)
    try:
        seal = StoreSeal(key, "one-host secret")
        store.set(_KEY, _ONE_HOST + os.path.basename(path) + ":" +
                  seal.seal(unique_id))
        # Every rank reads the file (or says why not) before it goes.
        failed = []
        for r in range(1, size):
            answer = _ask(store, f"mcl/one_host_read/{r}")
            if answer != "ok":
                failed.append(f"rank {r}: {answer}")
    finally:
        os.unlink(path)
    if failed:
        refusal = (
            "mcl.torch: without MCL_SECRET, the ranks of one host share a "
            "secret through a private file, and " + "; ".join(failed) +
            ". Set MCL_SECRET to the same 32 hex digits on every rank")
        store.set(_VERDICT, refusal)
        raise PermissionError(refusal)
    store.set(_VERDICT, "ok")
    _say_once("MCL_SECRET is not set and every rank of the group is on this "
              "host: made a random secret for it, shared through a file "
              "only this user can read")
    return seal, unique_id


def _follow_without_secret(store, rank):
    value = _ask(store, _KEY)
    if not value.startswith(_ONE_HOST):
        seal = StoreSeal(None, "no key")
        return seal, seal.open(value)
    name, sealed = value[len(_ONE_HOST):].split(":", 1)
    path = os.path.join(_private_directory(), name)
    try:
        key = _read_key(path)
    except (OSError, PermissionError) as e:
        store.set(f"mcl/one_host_read/{rank}",
                  f"cannot read {path} ({e.strerror or e})"
                  if isinstance(e, OSError) and e.strerror else str(e))
        raise PermissionError(
            f"mcl.torch: rank 0 shared the group's secret through {path}, "
            f"which this rank cannot read: {e}. Set MCL_SECRET to the same "
            "32 hex digits on every rank") from e
    store.set(f"mcl/one_host_read/{rank}", "ok")
    # Rank 0 fails the group when another rank could not read the file:
    # this rank must not go on to wait for it in the rendezvous.
    verdict = _ask(store, _VERDICT)
    if verdict != "ok":
        raise PermissionError("rank 0: " + verdict)
    seal = StoreSeal(key, "one-host secret")
    return seal, seal.open(sealed)

"""How mcl.torch hands the unique id to every rank through torch's store
without handing its secret to whoever else can read the store (a TCPStore
takes connections from anyone who reaches MASTER_ADDR:MASTER_PORT; a
FileStore's file is often readable by other users).

- MCL_SECRET set on every rank: the store holds the id with its secret
  sealed under MCL_SECRET (BLAKE2b keystream over a fresh salt, BLAKE2b
  tag), so only holders of MCL_SECRET can take it and a changed entry is
  refused;
- else only where the user said the store is private
  (``mcl.torch.allow_secret_in_store()``): the id as it is;
- else init refuses, saying how to choose."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets

_allowed = False
_FORM = "mcl-sealed1"
_REFUSED = "mcl-refused:"  # rank 0 refused: the others fail at once too


def allow_secret_in_store(allowed: bool = True) -> None:
    """Lets mcl.torch put the unique id, secret included, in torch's
    store: for stores nobody else can read (a FileStore in a directory
    only you can enter, a launcher's private store). Without it, and
    without MCL_SECRET, init_process_group("mcl") refuses."""
    global _allowed
    _allowed = bool(allowed)


def _job_secret() -> bytes | None:
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


def for_store(unique_id: str) -> str:
    """What rank 0 puts in the store for unique_id."""
    secret = _job_secret()
    if secret is not None:
        salt = secrets.token_bytes(16)
        plain = unique_id.encode()
        sealed = bytes(a ^ b for a, b in
                       zip(plain, _stream(secret, salt, len(plain))))
        return ":".join([_FORM, salt.hex(), sealed.hex(),
                         _tag(secret, salt, sealed).hex()])
    if _allowed:
        return unique_id
    raise PermissionError(_refusal())


def refusal_for_store() -> str:
    """What rank 0 puts in the store when it refuses, so the other ranks
    fail with its reason instead of waiting."""
    return _REFUSED + _refusal()


def _refusal() -> str:
    return (
        "mcl.torch: the communicator's secret would go into torch's store, "
        "which others who reach it can read (a TCPStore takes anyone who "
        "reaches MASTER_ADDR:MASTER_PORT): set MCL_SECRET to the same 32 "
        "hex digits on every rank (e.g. from `openssl rand -hex 16`), or, "
        "for a store only you can read, call "
        "mcl.torch.allow_secret_in_store() before init_process_group")


def from_store(value: str) -> str:
    """The unique id rank 0 put in the store."""
    if value.startswith(_REFUSED):
        raise PermissionError("rank 0: " + value[len(_REFUSED):])
    if not value.startswith(_FORM + ":"):
        if _job_secret() is not None:
            raise PermissionError(
                "mcl.torch: MCL_SECRET is set here but rank 0 put the unique "
                "id in the store unsealed: set MCL_SECRET on every rank")
        return value
    secret = _job_secret()
    if secret is None:
        raise PermissionError(
            "mcl.torch: rank 0 sealed the unique id with MCL_SECRET, which is "
            "not set here: set the same MCL_SECRET on every rank")
    _, salt_hex, sealed_hex, tag_hex = value.split(":")
    salt, sealed = bytes.fromhex(salt_hex), bytes.fromhex(sealed_hex)
    if not hmac.compare_digest(_tag(secret, salt, sealed),
                               bytes.fromhex(tag_hex)):
        raise PermissionError(
            "mcl.torch: the unique id in the store was not sealed with this "
            "rank's MCL_SECRET (a different MCL_SECRET than rank 0's, or the "
            "store entry was changed)")
    return bytes(a ^ b for a, b in
                 zip(sealed, _stream(secret, salt, len(sealed)))).decode()

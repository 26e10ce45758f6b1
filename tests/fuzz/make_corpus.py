#!/usr/bin/env python3
"""Writes the seed inputs of the fuzz targets whose inputs are binary (or
built from others): small, valid messages in the layouts the targets
document, plus a few near misses. The text corpora (topology_json,
system_profiler, networksetup) are kept by hand.

    tests/fuzz/make_corpus.py      # rewrites tests/fuzz/corpus/<target>/

Run it after changing a wire format, then check what changed in git.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


# ---- bootstrap frames (core/bootstrap/bootstrap_protocol.h): big-endian ----


def u32(v):
    return struct.pack(">I", v)


def text(s):
    b = s.encode()
    return u32(len(b)) + b


def frame(kind, payload):
    return u32(kind) + u32(len(payload)) + payload


CHALLENGE, AUTH_PROOF, AUTH_OK, HELLO, WELCOME, FAILURE = 1, 2, 3, 4, 5, 6
ALL_GATHER, ALL_GATHER_RESULT, BYE = 7, 8, 9


SHM_FREE = struct.pack(">Q", 64 << 20)  # the room in /dev/shm


def hello(rank, nranks):
    return (u32(1) + u32(rank) + u32(nranks) + u32(4242) + u32(30000) +
            text("host-id-%d" % rank) + text("mac%d.local" % rank) +
            SHM_FREE)


def welcome(hosts):
    body = struct.pack(">Q", 0x1122334455667788) + u32(len(hosts))
    for i, h in enumerate(hosts):
        body += text("host-id-%d" % i) + text(h) + u32(1000 + i) + SHM_FREE
    return body


def all_gather(round_, parts):
    body = u32(round_) + u32(len(parts))
    for p in parts:
        body += u32(len(p)) + p
    return body


def bootstrap():
    t = "bootstrap_messages"
    write(t, "rank_to_root.bin",
          frame(AUTH_PROOF, bytes(range(64))) + frame(HELLO, hello(1, 3)) +
          frame(ALL_GATHER, all_gather(0, [b"inventory of rank 1"])) +
          frame(BYE, b""))
    write(t, "root_to_rank.bin",
          frame(CHALLENGE, bytes(32)) + frame(AUTH_OK, bytes(range(32))) +
          frame(WELCOME, welcome(["mac0", "mac1", "mac2"])) +
          frame(ALL_GATHER_RESULT, all_gather(0, [b"a", b"", b"ccc"])))
    write(t, "failure.bin",
          frame(FAILURE, u32(8) + text("rank 2 timed out")))
    write(t, "welcome_one_rank.bin", frame(WELCOME, welcome(["solo"])))
    write(t, "hello_truncated.bin", frame(HELLO, hello(0, 2))[:30])
    write(t, "unknown_type.bin", frame(10, b"") + frame(BYE, b""))


# ---- TCP (transports/tcp): first byte picks the message ----


def endpoint(name, host, port, prefix, loopback=False, allowed=True):
    return (text(name) + text(host) + u32(port) + u32(prefix) +
            bytes([int(loopback), int(allowed)]))


def endpoints(*entries):
    return u32(len(entries)) + b"".join(entries)


def tcp():
    t = "tcp_wire"
    comm = struct.pack(">Q", 0x0123456789abcdef)
    write(t, "hello_ours.bin", b"\0" + comm + u32(3) + u32(1) + u32(0) + u32(2))
    write(t, "hello_other_comm.bin",
          b"\0" + struct.pack(">Q", 7) + u32(0) * 4)
    write(t, "endpoints_two_cables.bin", b"\1" + endpoints(
        endpoint("lo0", "127.0.0.1", 5001, 8, loopback=True),
        endpoint("en0", "192.168.1.20", 5001, 24),
        endpoint("en2", "10.0.1.2", 5001, 30),
        endpoint("en3", "10.0.2.2", 5001, 30)))
    write(t, "endpoints_ipv6_cable.bin", b"\1" + endpoints(
        endpoint("en2", "fd00::2", 6000, 126),
        endpoint("en0", "fe80::2", 6000, 64)))
    write(t, "endpoints_lan_only.bin",
          b"\1" + endpoints(endpoint("en0", "192.168.1.77", 7000, 24)))
    write(t, "endpoints_routed.bin",
          b"\1" + endpoints(endpoint("en0", "172.16.4.5", 7000, 16)))
    write(t, "endpoints_cable_not_allowed.bin", b"\1" + endpoints(
        endpoint("en2", "10.0.1.2", 5001, 30, allowed=False),
        endpoint("en0", "192.168.1.20", 5001, 24)))
    write(t, "endpoints_bad_address.bin",
          b"\1" + endpoints(endpoint("en0", "not-an-address", 1, 24)))
    # header {length, piece} in host order, expected piece (big-endian),
    # slot bytes (host order)
    write(t, "piece_header_next.bin", b"\2" + struct.pack(
        "<II", 4096, 5) + struct.pack(">Q", 5) + struct.pack("<I", 131072))
    write(t, "piece_header_too_long.bin", b"\2" + struct.pack(
        "<II", 131073, 5) + struct.pack(">Q", 5) + struct.pack("<I", 131072))
    # A broken socket's rest, scanned for a farewell: where the reading
    # stood (mode % 3: header, payload, text; mode // 3: how far), slot
    # bytes (host order), the stream: pieces {length, piece} + payload, then
    # the farewell header and its 248 bytes of text.
    def piece(length, index):
        return struct.pack("<II", length, index) + b"\x5a" * length

    def farewell(reason):
        return (struct.pack("<II", 0xffffffff, 0) +
                reason.encode().ljust(248, b"\0"))

    slot = struct.pack("<I", 64)
    write(t, "farewell_behind_pieces.bin", b"\3" + bytes([0]) + slot +
          piece(10, 0) + piece(64, 2) + farewell("rank 0/3 gave up"))
    write(t, "farewell_inside_payload.bin", b"\3" + bytes([1 + 3 * 20]) +
          slot + b"\1" * 20 + farewell("after the piece"))
    write(t, "farewell_cut_short.bin", b"\3" + bytes([0]) + slot +
          farewell("cut short")[:20])
    write(t, "farewell_none.bin", b"\3" + bytes([0]) + slot + piece(3, 0))


# ---- shared memory (transports/shm/shm_layout.h): host order ----

SEGMENT_MAGIC = 0x6d636c2d73686d31
SEGMENT_HEADER_BYTES = 192  # three cache lines: fields, doorbell, sleeping
# Room left for each ring's control (sizeof(RingControl), 64 or a few cache
# lines): the segments below ask the target to put in this build's ring
# stride, and are big enough for any control up to this size.
RING_CONTROL_ROOM = 512
THIS_BUILDS_STRIDE = 0x80


def slot_stride(slot_bytes):
    return (16 + slot_bytes + 63) // 64 * 64


def segment_header(rings, slots, slot_bytes, stride=0, magic=SEGMENT_MAGIC):
    fields = struct.pack("<QIIIIQI", magic, rings, slots, slot_bytes, 1234,
                         stride, 1)
    return fields.ljust(SEGMENT_HEADER_BYTES, b"\0")


def segment(ranks, slots, slot_bytes, stride=None, **kw):
    """Selector, ranks (and whether to fill in the stride), the segment."""
    rings = 2 * ranks
    flags = ranks - 1 if stride is not None else (ranks - 1) | THIS_BUILDS_STRIDE
    room = rings * (RING_CONTROL_ROOM + slots * slot_stride(slot_bytes))
    return (bytes([0, flags]) +
            segment_header(rings, slots, slot_bytes, stride or 0, **kw) +
            bytes(room))


def ring_slots(pieces, count=4, slot_bytes=128):
    """Slot headers {sequence, length} and payloads of an inbound ring."""
    out = b""
    for i in range(count):
        if i < len(pieces):
            seq, length = pieces[i]
            body = struct.pack("<QII", seq, length, 0)
            body += bytes((i + k) % 256 for k in range(min(length, slot_bytes)))
        else:
            body = b""
        out += body.ljust(slot_stride(slot_bytes), b"\0")
    return b"\1" + out


def ring_control(consumed, farewell=b""):
    """The control of the ring we produce into, as the peer writes it: its
    count of slots consumed, then (next cache line) its farewell flag and
    text."""
    control = struct.pack("<Q", consumed).ljust(64, b"\0")
    if farewell:
        control += struct.pack("<I", 1) + farewell + b"\0"
    return control


def shm():
    t = "shm_wire"
    write(t, "segment_one_rank.bin", segment(1, 2, 64))
    write(t, "segment_two_ranks.bin", segment(2, 1, 128))
    write(t, "segment_wrong_magic.bin", segment(1, 1, 64, magic=1))
    write(t, "segment_wrong_stride.bin", segment(1, 1, 64, stride=64))
    # 2^30 slots of 4 GiB: four rings of 2^62 bytes and their controls,
    # whose total wraps around 64 bits to the four controls: a segment of
    # a few KiB must not pass for them.
    write(t, "segment_size_wraps.bin",
          bytes([0, 1 | THIS_BUILDS_STRIDE]) +
          segment_header(4, 1 << 30, 0xFFFFFFC0) + bytes(4 * RING_CONTROL_ROOM))
    write(t, "ring_one_piece.bin", ring_slots([(1, 100)]))
    write(t, "ring_full.bin",
          ring_slots([(1, 128), (2, 1), (3, 64), (4, 127)]))
    write(t, "ring_gap.bin", ring_slots([(1, 10), (5, 10)]))
    write(t, "ring_empty_piece.bin", ring_slots([(1, 0)]))
    write(t, "ring_piece_too_long.bin", ring_slots([(1, 129)]))
    write(t, "ring_peer_said_farewell.bin", ring_slots([(1, 8)]) +
          ring_control(0, b"rank 1: mclCommAbort"))
    write(t, "ring_peer_consumed_ahead.bin",
          ring_slots([]) + ring_control(1 << 63))


# ---- RDMA (transports/rdma): first byte picks the message ----


def qp_address(target, channel, index, qpn):
    gid = bytes(10) + b"\xff\xff" + bytes([10, 0, 1, 1 + index])
    return (u32(target) + u32(channel) + u32(index) + gid + u32(qpn) +
            u32(qpn * 7) + u32(0) + u32(1024))


CONTROL = 0xFFFFFFFFFFFFFFFF
CREDITED = 8  # rdma_frame.h's kFlagCredited


def rdma_frame(wire, seq, payload, transmission, wires=1, flags=CREDITED,
               credits=(0,) * 8, acked=(0,) * 8, length=None, before=None):
    """One arrival: wire, length, the 64-byte header (rdma_frame.h), then
    the payload. `before`: the credited transmissions sent before it on
    its wire (a credited frame's own number, unless a test says else)."""
    if before is None:
        before = transmission
    header = struct.pack("<QIIBBBBI", seq, len(payload), transmission, wires,
                         flags, 0, 0, before)
    header += struct.pack("<8H", *credits) + struct.pack("<8H", *acked)
    body = header.ljust(64, b"\0") + payload
    if length is None:
        length = len(body)
    return bytes([wire]) + struct.pack("<H", length) + body


def rdma():
    t = "rdma_wire"
    write(t, "addresses_two_wires.bin", b"\0" + u32(2) +
          qp_address(1, 0, 0, 17) + qp_address(1, 1, 0, 18))
    write(t, "addresses_none.bin", b"\0" + u32(0))
    write(t, "addresses_count_too_big.bin", b"\0" + u32(1000) +
          qp_address(1, 0, 0, 17))
    write(t, "frames_one_wire.bin", b"\1\0" +
          rdma_frame(0, 0, b"hello", 0) + rdma_frame(0, 1, bytes(192), 1) +
          rdma_frame(0, CONTROL, b"", 2, credits=(4, 0, 0, 0, 0, 0, 0, 0)) +
          rdma_frame(0, 2, b"x", 3))
    write(t, "frames_two_wires.bin", b"\1\1" +
          rdma_frame(1, 1, b"second", 0, wires=2) +
          rdma_frame(0, 0, b"first", 0, wires=2) +
          rdma_frame(0, 2, b"third", 1, wires=2) +
          rdma_frame(1, 3, b"fourth", 1, wires=2))
    # Piece 0 lost: piece 1 is dropped until piece 0 comes again.
    write(t, "frames_lost.bin", b"\1\0" + rdma_frame(0, 1, b"skips 0", 1) +
          rdma_frame(0, 0, b"zero again", 2) + rdma_frame(0, 1, b"one", 3))
    write(t, "frames_duplicate.bin", b"\1\0" + rdma_frame(0, 0, b"once", 0) +
          rdma_frame(0, 0, b"twice", 0) + rdma_frame(0, 1, b"next", 1))
    write(t, "frames_uncredited_control.bin", b"\1\0" +
          rdma_frame(0, CONTROL, b"", 0, flags=1) +
          rdma_frame(0, 0, b"data", 0))
    # A probe that says two transmissions came before it: both were lost.
    write(t, "frames_lost_before_probe.bin", b"\1\0" +
          rdma_frame(0, CONTROL, b"", 0, flags=1, before=2) +
          rdma_frame(0, 0, b"zero again", 2))
    write(t, "frames_short.bin", b"\1\0" +
          rdma_frame(0, 0, b"abc", 0, length=40))
    write(t, "frames_wrong_wires.bin", b"\1\0" +
          rdma_frame(0, 0, b"", 0, wires=3))
    write(t, "frames_empty_data.bin", b"\1\0" + rdma_frame(0, 0, b"", 0))
    for name in ["mesh4.json", "doubled_pair.json", "mlx_ring_hostfile.json"]:
        with open(os.path.join(CORPUS, "topology_json", name), "rb") as f:
            write(t, "plan_" + name, b"\2" + f.read())
    write(t, "plan_thunderbolt4.json", b"\2" + b"""{"hosts": [
 {"id": 0, "name": "mac0", "ranks": [0]},
 {"id": 1, "name": "mac1", "ranks": [1]}],
 "links": [{"a": {"host": 0, "interface": "en2"},
            "b": {"host": 1, "interface": "en3"},
            "kind": "thunderbolt", "generation": 4}]}
""")
    write(t, "plan_two_cables.json", b"\2" + b"""{"hosts": [
 {"id": 0, "name": "mac0", "ranks": [0, 1]},
 {"id": 1, "name": "mac1", "ranks": [2, 3]},
 {"id": 2, "name": "mac2", "ranks": [4]}],
 "links": [{"a": {"host": 0, "interface": "en2"},
            "b": {"host": 1, "interface": "en3"}, "generation": 5},
           {"a": {"host": 1, "interface": "en5"},
            "b": {"host": 0, "interface": "en4"}, "generation": 5},
           {"a": {"host": 1, "interface": "en2"},
            "b": {"host": 2, "interface": "en2"}, "generation": 5}]}
""")


# ---- Linux sysfs, unique ids, environment specs: text ----


def sysfs():
    t = "thunderbolt_sysfs"
    write(t, "two_hosts.txt", """@ 0-0/uevent
DEVTYPE=thunderbolt_device
@ 0-0/unique_id
0f3a9c52-1d44-4e0b-a7b2-6c8d91e0f001
@ 0-1/uevent
DEVTYPE=thunderbolt_xdomain
USB4_VERSION=1.0
@ 0-1/device_name
Mac Studio
@ 0-1/vendor_name
Apple Inc.
@ 0-1/unique_id
7b9e2c10-3a41-4f55-8d62-0c1e5a7b3d21
@ 0-1/rx_speed
40.0 Gb/s
@ 0-1/tx_speed
40.0 Gb/s
@ 0-1/rx_lanes
2
@ 0-1/tx_lanes
2
@ 0-1.1/key
network
@ 0-3.1/key
debug
@ 0-3/unique_id
c2d4e6f8-0a1b-4c3d-9e5f-112233445566
@ 0-3/rx_speed
20 Gb/s
""")
    write(t, "no_speeds.txt", """@ 1-2/uevent
DEVTYPE=thunderbolt_xdomain
@ 1-2/unique_id
u
""")
    write(t, "bad_speed.txt", """@ 0-1/uevent
DEVTYPE=thunderbolt_xdomain
@ 0-1/unique_id
7b9e2c10
@ 0-1/rx_speed
fast
""")
    write(t, "speed_overflows.txt", """@ 0-1/uevent
DEVTYPE=thunderbolt_xdomain
@ 0-1/unique_id
7b9e2c10
@ 0-1/rx_speed
""" + "9" * 400 + " Gb/s\n")
    write(t, "bad_lanes.txt", """@ 0-1/uevent
DEVTYPE=thunderbolt_xdomain
@ 0-1/unique_id
7b9e2c10
@ 0-1/tx_lanes
17
""")
    write(t, "no_unique_id.txt", """@ 0-1/uevent
DEVTYPE=thunderbolt_xdomain
@ 0-1/device_name
Mac Studio
""")


def unique_id():
    t = "unique_id"
    secret = "00112233445566778899aabbccddeeff"
    write(t, "ipv4.txt", "mcl1:192.168.7.21:29500:" + secret)
    write(t, "ipv6.txt", "mcl1:[fd00:1234::abcd:1]:29500:" + secret.upper())
    write(t, "more_roots.txt", "mcl1:10.0.1.1:5000,10.0.2.1:5000,[::1]:5000:"
          + secret)
    write(t, "port_out_of_range.txt", "mcl1:10.0.0.1:65536:" + secret)
    write(t, "short_secret.txt", "mcl1:10.0.0.1:1:0011")
    write(t, "no_prefix.txt", "10.0.0.1:1:" + secret)
    # The 128-byte form: magic, format 1, IPv4, port, address, secret, then
    # one further root (IPv6).
    binary = (b"MCLI" + bytes([1, 4]) + struct.pack(">H", 29500) +
              bytes([10, 0, 0, 1]).ljust(16, b"\0") + bytes(range(16)) +
              bytes([1, 6]) + struct.pack(">H", 29501) +
              bytes(15) + b"\1")
    write(t, "binary_two_roots.bin", binary.ljust(128, b"\0"))
    write(t, "binary_damaged_list.bin",
          (binary[:40] + bytes([2, 9])).ljust(128, b"\0"))


def env_specs():
    t = "algo_spec"
    for name, spec in [("pairs", "allreduce:tree;allgather:ring"),
                       ("bare", "direct"), ("auto", "auto"),
                       ("mixed", " ring ; reduce-scatter : direct;alltoall:auto"),
                       ("every", "allreduce:halving_doubling;allgather:direct;"
                        "broadcast:chain;reduce:tree;reducescatter:ring;"
                        "alltoall:direct"),
                       ("unknown_algorithm", "allreduce:butterfly"),
                       ("unknown_collective", "scan:ring")]:
        write(t, name + ".txt", spec)
    t = "socket_ifname"
    for name, spec in [("prefixes", "en,eth"), ("exclude", "^docker,lo"),
                       ("exact", "=en2"), ("exclude_exact", "^=en0, en1 "),
                       ("empty", ""), ("no_name", "^=,")]:
        write(t, name + ".txt", spec)


# ---- init's first all-gather (core/init/init_details.h): big-endian ----


def shm_details(segment="mcl-123-4"):
    return struct.pack(">Q", 4 << 20) + text(segment)


def tcp_details(endpoints_bytes=b""):
    return (struct.pack(">III", 2, 8, 131072) + u32(len(endpoints_bytes)) +
            endpoints_bytes)


def rank_rdma(mac=0, unavailable="", kept=(), ports=()):
    """A rank's RDMA report (transports/rdma/rdma_wire_plan.h): ports are
    (device, netdev, ipv4, problem)."""
    out = struct.pack(">i", mac) + text(unavailable) + u32(len(kept))
    for k in kept:
        out += text(k)
    out += u32(len(ports))
    for port in ports:
        out += b"".join(text(f) for f in port)
    return out


def rdma_details(provider="emu", report=None):
    if report is None:
        report = rank_rdma(ports=[("rdma_en2", "en2", "169.254.0.1", "")])
    return (text(provider) + struct.pack(">II", 4096, 32) + u32(len(report)) +
            report)


def details(devices=(), inventory="", topo="", transport="auto",
            algorithms=""):
    out = u32(len(devices))
    for name, blob in devices:
        out += text(name) + u32(len(blob)) + blob
    return (out + text(inventory) + text(topo) + text(transport) +
            text(algorithms) + struct.pack(">I", 8) + text("10.0.0.1:40000") +
            struct.pack(">I", 10))


def init_details():
    t = "init_details"
    write(t, "single_host.bin", details([("shm", shm_details())]))
    write(t, "with_endpoints_and_inventory.bin", details(
        [("shm", shm_details()),
         ("tcp", tcp_details(endpoints(endpoint("en2", "10.0.1.2", 5001,
                                                 30))))],
        inventory='{"host":"mac1","cores":10}', topo="digest 00ff",
        transport="tcp", algorithms="allreduce:ring"))
    write(t, "with_rdma.bin", details([("shm", shm_details()),
                                       ("rdma", rdma_details())],
                                      transport="rdma"))
    write(t, "truncated.bin", details([("shm", shm_details())])[:20])
    write(t, "trailing_byte.bin", details() + b"\0")


def device_details():
    t = "device_details"
    write(t, "shm.bin", b"\x00" + shm_details())
    write(t, "tcp.bin", b"\x01" + tcp_details(endpoints(
        endpoint("en2", "10.0.1.2", 5001, 30),
        endpoint("lo", "127.0.0.1", 5002, 8, loopback=True))))
    write(t, "tcp_other_sockets.bin", b"\x01" + struct.pack(">III", 4, 8,
                                                            131072) + u32(0))
    write(t, "rdma.bin", b"\x02" + rdma_details("ibverbs"))
    write(t, "rdma_no_library.bin", b"\x02" + rdma_details(
        "ibverbs", rank_rdma(unavailable="cannot load the RDMA library")))
    write(t, "rdma_ports.bin", b"\x02" + rdma_details("ibverbs", rank_rdma(
        kept=["rdma_en2"], ports=[("rdma_en2", "en2", "10.0.1.1", ""),
                                  ("rdma_en3", "en3", "", "the port is down")])))
    write(t, "rdma_truncated.bin", b"\x02" + text("ibverbs")[:3])


if __name__ == "__main__":
    bootstrap()
    tcp()
    shm()
    rdma()
    sysfs()
    unique_id()
    env_specs()
    init_details()
    device_details()

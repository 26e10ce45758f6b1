"""A transparent TCP proxy for the security tests, run in a router namespace
whose iptables REDIRECT sends it every TCP connection routed through: it
connects on to the original destination (SO_ORIGINAL_DST), appends every
byte both ways to a capture file, and can flip one byte of what flows back
from the destination to the connecting side, at a given offset of each
connection (to a given port, or any).

    proxy.py LISTEN_PORT CAPTURE [FLIP_OFFSET [FLIP_PORT]]

Prints "listening" once it accepts. Standard library only."""

import socket
import struct
import sys
import threading

SO_ORIGINAL_DST = 80
lock = threading.Lock()


def original_destination(conn):
    raw = conn.getsockopt(socket.SOL_IP, SO_ORIGINAL_DST, 16)
    port, packed = struct.unpack("!2xH4s8x", raw)
    return socket.inet_ntoa(packed), port


def pump(source, sink, capture, flip_at):
    seen = 0
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            if flip_at is not None and seen <= flip_at < seen + len(data):
                data = bytearray(data)
                data[flip_at - seen] ^= 0x01
                data = bytes(data)
            seen += len(data)
            with lock:
                capture.write(data)
                capture.flush()
            sink.sendall(data)
    except OSError:
        pass
    for s in (source, sink):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(conn, capture, flip_offset, flip_port):
    host, port = original_destination(conn)
    try:
        upstream = socket.create_connection((host, port), timeout=10)
        upstream.settimeout(None)
    except OSError:
        conn.close()
        return
    flip = flip_offset if flip_offset is not None and flip_port in (0, port) else None
    threading.Thread(target=pump, args=(conn, upstream, capture, None),
                     daemon=True).start()
    pump(upstream, conn, capture, flip)


def main():
    listen_port = int(sys.argv[1])
    capture = open(sys.argv[2], "ab")
    flip_offset = int(sys.argv[3]) if len(sys.argv) > 3 else None
    flip_port = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", listen_port))
    server.listen(256)
    print("listening", flush=True)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve,
                         args=(conn, capture, flip_offset, flip_port),
                         daemon=True).start()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""An independent raw IMAP client for cross-checking the bench's cold table (issue 35 item 5).

Written apart from packages/bench/lib/raw-imap.js on purpose (another language, another
reader): it logs in, optionally SELECTs untimed, then writes each timed command and reads to its
tagged completion, framing lines and skipping {n} literals by length, parsing nothing while the
clock runs. Prints one JSON object: per command, ms (write to tagged OK), bytes, status line.

usage: raw_imap_time.py HOST PORT USER PASSWORD [--select] CMD [CMD ...]
"""
import json
import re
import socket
import sys
import time

LITERAL = re.compile(rb"\{(\d+)\+?\}\r\n$")


class Conn:
    # The reader keeps one growing buffer and an offset into it: slicing the buffer at every
    # line (the first version) copied the rest of a 1 MB read once per line, quadratic in a
    # 9.5 MB list-view answer, and made this client, not the server, the bottleneck.
    def __init__(self, host, port):
        self.s = socket.create_connection((host, port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0
        self.n = 0
        self.line()  # greeting

    def fill(self):
        if self.pos > (1 << 20):  # drop what was read, amortised
            del self.buf[: self.pos]
            self.pos = 0
        d = self.s.recv(1 << 20)
        if not d:
            raise EOFError("connection closed")
        self.buf += d

    def line(self):
        start = self.pos
        while True:
            i = self.buf.find(b"\r\n", start)
            if i >= 0:
                out = bytes(self.buf[self.pos : i + 2])
                self.pos = i + 2
                return out
            start = max(self.pos, len(self.buf) - 1)
            base = self.pos
            self.fill()
            start -= base - self.pos  # the buffer may have been compacted

    def skip(self, n):
        while len(self.buf) - self.pos < n:
            n -= len(self.buf) - self.pos
            self.pos = len(self.buf)
            self.fill()
        self.pos += n

    def command(self, text):
        self.n += 1
        tag = b"c%d" % self.n
        t0 = time.perf_counter_ns()
        self.s.sendall(tag + b" " + text.encode() + b"\r\n")
        size = 0
        while True:
            ln = self.line()
            size += len(ln)
            m = LITERAL.search(ln)
            while m:  # a literal, then the rest of the line
                k = int(m.group(1))
                self.skip(k)
                size += k
                ln = self.line()
                size += len(ln)
                m = LITERAL.search(ln)
            if ln.startswith(tag + b" "):
                ms = (time.perf_counter_ns() - t0) / 1e6
                return {"ms": ms, "bytes": size, "status": ln.decode("latin1").strip()}


def main(argv):
    host, port, user, password = argv[1], int(argv[2]), argv[3], argv[4]
    rest = argv[5:]
    select = False
    if rest and rest[0] == "--select":
        select, rest = True, rest[1:]
    c = Conn(host, port)
    login = c.command('LOGIN "%s" "%s"' % (user, password))
    if not login["status"].split(" ")[1] == "OK":
        raise SystemExit("login failed: " + login["status"])
    if select:
        c.command("SELECT INBOX")
    out = [dict(command=cmd, **c.command(cmd)) for cmd in rest]
    c.command("LOGOUT")
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)

#!/usr/bin/env python3
"""A small HTTP file server for the download tests (never the network).

Serves the files under --root at their relative paths, with HTTP Range
support (206 Partial Content, 416 when the range starts at or past the
end), and can misbehave on purpose:

  --cut-after N   send only N bytes of the body of the next responses, then
                  close the connection (the client sees a cut transfer)
  --cut-times K   how many responses are cut (default 1)
  --no-range      ignore Range headers and always send the whole file (200)
  --rate B        send at most B bytes per second (a slow transfer)

Every request is logged to --log as "METHOD PATH RANGE" (RANGE is "-"
without one). The chosen port is written to --port-file once the server
listens. Runs until killed.
"""
import argparse
import os
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = None
lock = threading.Lock()
cuts_left = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def do_HEAD(self):
        self.serve(head=True)

    def do_GET(self):
        self.serve(head=False)

    def serve(self, head):
        global cuts_left
        rng = self.headers.get("Range")
        with open(args.log, "a") as log:
            log.write("%s %s %s\n" % (self.command, self.path, rng or "-"))
        rel = self.path.split("?", 1)[0].lstrip("/")
        path = os.path.realpath(os.path.join(args.root, rel))
        if not path.startswith(os.path.realpath(args.root) + os.sep) or \
                not os.path.isfile(path):
            body = b"not found\n"
            self.send_response(404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)
            return
        size = os.path.getsize(path)
        start, end = 0, size - 1
        status = 200
        if rng and not args.no_range and rng.startswith("bytes="):
            a, _, b = rng[6:].partition("-")
            start = int(a) if a else 0
            if b:
                end = min(int(b), size - 1)
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        length = end - start + 1
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "none" if args.no_range else "bytes")
        if status == 206:
            self.send_header("Content-Range",
                             "bytes %d-%d/%d" % (start, end, size))
        self.end_headers()
        if head:
            return
        with lock:
            cut = cuts_left > 0 and args.cut_after is not None
            if cut:
                cuts_left -= 1
        send = min(length, args.cut_after) if cut else length
        with open(path, "rb") as f:
            f.seek(start)
            left = send
            step = 65536
            if args.rate:
                step = max(1, min(step, args.rate // 10))
            while left > 0:
                chunk = f.read(min(left, step))
                if not chunk:
                    break
                self.wfile.write(chunk)
                left -= len(chunk)
                if args.rate:
                    time.sleep(len(chunk) / args.rate)
        self.wfile.flush()
        if cut:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that closes early (curl giving up on a server without
        # ranges) is part of the tests, not an error.
        pass


def main():
    global args, cuts_left
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--cut-after", type=int)
    p.add_argument("--cut-times", type=int, default=1)
    p.add_argument("--no-range", action="store_true")
    p.add_argument("--rate", type=int)
    args = p.parse_args()
    cuts_left = args.cut_times
    srv = Server(("127.0.0.1", 0), Handler)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()

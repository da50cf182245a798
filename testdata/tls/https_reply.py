"""A real HTTPS server for the TLS tests (`--ca-cert`).

usage: python3 https_reply.py BODY

Listens on 127.0.0.1 (a free port, printed as the first line on stdout) with
localhost.pem, which ca.pem signed, and answers every GET and POST with BODY (JSON
text). Exits when its standard input closes, so it never outlives its test.
"""

import http.server
import os
import ssl
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
BODY = sys.argv[1].encode()


class Reply(http.server.BaseHTTPRequestHandler):
    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    do_GET = _answer
    do_POST = _answer

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Reply)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(os.path.join(HERE, "localhost.pem"), os.path.join(HERE, "localhost.key"))
server.socket = context.wrap_socket(server.socket, server_side=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(server.server_address[1], flush=True)
sys.stdin.read()

"""The stdio runner and the HTTP server, driven as a host would."""

import http.client
import json
import os
import subprocess
import sys
import threading
import unittest

from helpers import HANDSHAKE, Fixed, query_line

from contextgraph_provider import HttpProviderServer, serve
from contextgraph_provider.http import ExposureError

HERE = os.path.dirname(os.path.abspath(__file__))


class Pipe:
    """A provider served over an OS pipe pair on a thread."""

    def __init__(self, provider, **options):
        self.in_r, self.in_w = os.pipe()
        out_r, out_w = os.pipe()
        self.replies = os.fdopen(out_r, "rb")
        output = os.fdopen(out_w, "wb")
        self.thread = threading.Thread(
            target=serve, args=(provider, lambda n: os.read(self.in_r, n), output), kwargs=options, daemon=True
        )
        self.thread.start()

    def send(self, *lines):
        os.write(self.in_w, b"".join(l + b"\n" for l in lines))

    def reply(self):
        return json.loads(self.replies.readline())

    def close(self):
        os.close(self.in_w)
        self.thread.join(5)
        os.close(self.in_r)


class Stdio(unittest.TestCase):
    def test_correlated_queries_run_concurrently_and_echo_their_ids(self):
        barrier = threading.Barrier(3, timeout=5)

        class Rendezvous(Fixed):
            def query(self, query):
                barrier.wait()  # only returns when 3 queries are in flight at once
                return super().query(query)

        p = Pipe(Rendezvous(), max_workers=3)
        p.send(HANDSHAKE, query_line("q1"), query_line("q2"), query_line("q3"))
        self.assertEqual(p.reply()["type"], "handshake_ack")
        ids = sorted(p.reply()["id"] for _ in range(3))
        self.assertEqual(ids, ["q1", "q2", "q3"])
        p.close()
        self.assertFalse(p.thread.is_alive())

    def test_lock_step_answers_in_order_without_ids(self):
        p = Pipe(Fixed(correlation=False))
        p.send(HANDSHAKE, query_line("a", max_frames=1), query_line("b", max_frames=2), b'{"type":"shutdown"}')
        p.reply()
        first, second = p.reply(), p.reply()
        self.assertEqual((len(first["result"]["frames"]), len(second["result"]["frames"])), (1, 2))
        self.assertNotIn("id", first)
        p.thread.join(5)
        self.assertFalse(p.thread.is_alive(), "shutdown ends serving")

    def test_an_oversized_line_is_answered_and_serving_goes_on(self):
        p = Pipe(Fixed(), max_line_bytes=200)
        p.send(HANDSHAKE, b'{"type":"query","pad":"' + b"x" * 5000 + b'"}', query_line("ok"))
        p.reply()
        self.assertEqual(p.reply()["code"], "bad_request")
        self.assertEqual(p.reply()["id"], "ok")
        p.close()

    def test_r2_a_spawned_provider_writes_only_envelopes_and_exits_0_on_shutdown(self):
        script = (
            "import sys; sys.path.insert(0, %r); from helpers import Fixed; from contextgraph_provider import serve_stdio\n"
            "class Chatty(Fixed):\n"
            "    def query(self, q):\n"
            "        print('debug output that must not reach the host')\n"
            "        return super().query(q)\n"
            "serve_stdio(Chatty())\n" % HERE
        )
        proc = subprocess.run(
            [sys.executable, "-c", script],
            input=b"\n".join([HANDSHAKE, query_line("q1"), b'{"type":"shutdown"}']) + b"\n",
            capture_output=True,
            timeout=20,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.decode().splitlines()
        self.assertEqual([json.loads(l)["type"] for l in lines], ["handshake_ack", "frames"])
        self.assertIn(b"debug output", proc.stderr)


class Http(unittest.TestCase):
    TOKEN = "s3cret-token"

    def setUp(self):
        self.server = HttpProviderServer(Fixed(), "127.0.0.1", 0, token=self.TOKEN, log=False)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.port = int(self.server.url.split(":")[2].split("/")[0])

    def tearDown(self):
        self.server.shutdown()

    def post(self, body, headers=None, path="/cgp", method="POST"):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        h = {"Content-Type": "application/json", "Authorization": "Bearer " + self.TOKEN}
        h.update(headers or {})
        conn.request(method, path, body=body, headers={k: v for k, v in h.items() if v is not None})
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, (json.loads(data) if data else None), r

    def test_a_session_over_http(self):
        self.assertEqual(self.post(HANDSHAKE)[1]["type"], "handshake_ack")
        status, reply, _ = self.post(query_line("q1"))
        self.assertEqual((status, reply["type"], reply["id"]), (200, "frames", "q1"))
        status, reply, _ = self.post(b"not json")
        self.assertEqual((status, reply["code"]), (200, "bad_request"))
        self.assertEqual(self.post(b'{"type":"shutdown"}')[:2], (204, None))
        self.assertEqual(self.post(b'{"type":"a_notice"}')[:2], (204, None))

    def test_the_gates(self):
        status, _, r = self.post(HANDSHAKE, {"Authorization": None})
        self.assertEqual((status, r.getheader("WWW-Authenticate")), (401, "Bearer"))
        self.assertEqual(self.post(HANDSHAKE, {"Authorization": "Bearer wrong"})[0], 401)
        self.assertEqual(self.post(HANDSHAKE, path="/other")[0], 404)
        self.assertEqual(self.post(None, method="GET")[0], 405)
        self.assertEqual(self.post(HANDSHAKE, {"Content-Type": "text/plain"})[0], 415)
        self.assertEqual(self.post(HANDSHAKE, {"Host": "evil.example:80"})[0], 421)
        self.server.max_body_bytes = 10
        status, reply, _ = self.post(HANDSHAKE)
        self.assertEqual((status, reply["code"]), (413, "bad_request"))

    def test_public_addresses_need_tls_and_a_token(self):
        with self.assertRaises(ExposureError):
            HttpProviderServer(Fixed(), "0.0.0.0", 0)


if __name__ == "__main__":
    unittest.main()

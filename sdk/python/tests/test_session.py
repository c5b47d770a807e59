"""The protocol rules the runner enforces, one envelope at a time."""

import json
import unittest

from helpers import HANDSHAKE, Fixed, query_line

from contextgraph_provider import Provider, ProviderError, Session, frame, pack, sha256_digest, verdict_by_digest


def ready(provider):
    s = Session(provider)
    ack = s.handle_line(HANDSHAKE)
    assert ack["type"] == "handshake_ack", ack
    return s


class Handshake(unittest.TestCase):
    def test_ack_names_the_provider_and_capabilities(self):
        ack = Session(Fixed()).handle_line(HANDSHAKE)
        self.assertEqual(ack["protocol_version"], "contextgraph/1.0-draft")
        self.assertEqual(ack["provider"]["name"], "fixed")
        self.assertEqual(ack["capabilities"]["query"]["kinds"], ["doc", "fact"])
        self.assertTrue(ack["capabilities"]["correlation"])
        self.assertFalse(ack["capabilities"]["verify"])

    def test_h3_another_family_is_named_and_the_session_stays_usable(self):
        s = Session(Fixed())
        err = s.handle_line(b'{"type":"handshake","protocol_version":"contextgraph/2.0"}')
        self.assertEqual(err["code"], "incompatible_version")
        self.assertEqual(s.handle_line(b'{"type":"handshake","protocol_version":"contextgraph/1.3"}')["type"], "handshake_ack")

    def test_no_query_before_the_handshake(self):
        err = Session(Fixed()).handle_line(query_line("q1"))
        self.assertEqual((err["code"], err["id"]), ("bad_request", "q1"))


class Robustness(unittest.TestCase):
    MALFORMED = [
        b"this is not json",
        b'{"type":"query","id":"m2","query":{"goal":"trunc',
        b'{"type":"query","id":"m3","query":{"goal":7,"max_frames":"many","max_tokens":-1}}',
        b'{"type":"query","id":"m4","query":{"goal":"\xff\xfe","max_frames":1,"max_tokens":10}}',
        b'{"type":"no_such_envelope","id":"m5"}',
        b'["type","query"]',
        b'{"id":"m7","query":{"goal":"x","max_frames":1,"max_tokens":10}}',
        b'{"type":"query","id":"m8","query":{"goal":"x","max_frames":true,"max_tokens":10}}',
        b'{"type":"query","id":"m9","query":{"goal":"x","max_frames":4294967296,"max_tokens":10}}',
        b'{"type":"query","id":"m10","query":{"goal":"x","max_frames":1,"max_tokens":10,"as_of":"2026-01-01"}}',
        b'{"type":"query","id":"m11","query":{"goal":"x","max_frames":1,"max_tokens":1},"query":{}}',
        b'{"type":"query","id":"m12","query":{"goal":"x","max_frames":1,"max_tokens":1,"embedding":[NaN]}}',
        b'{"type":"query","id":"m13","query":{"goal":"x","max_frames":1,"max_tokens":1,"embedding":[0.5]}}',
        b'{"type":"verify","request":{"frames":[{"frame_id":1}]}}',
        b'{"type":"frames","result":{"frames":[],"truncated":false}}',
        b"[" * 100000,
    ]

    def test_r1_malformed_lines_get_bad_request_and_the_session_survives(self):
        s = ready(Fixed())
        for line in self.MALFORMED:
            reply = s.handle_line(line)
            self.assertEqual((reply["type"], reply["code"]), ("error", "bad_request"), line[:60])
        self.assertEqual(s.handle_line(query_line("ok"))["type"], "frames")

    def test_u1_unknown_members_and_notifications_are_ignored(self):
        s = ready(Fixed())
        self.assertIsNone(s.handle_line(b'{"type":"cgp_notice","note":"x"}'))
        self.assertIsNone(s.handle_line(b'{"type":"error","message":"host complains"}'))
        plain = s.handle_line(query_line("a"))
        extra = json.loads(query_line("a"))
        extra["x-trace"] = "1"
        extra["query"]["x-future"] = {"nested": [1]}
        extra["query"]["filters"] = ["language"]
        extra["query"]["anchors"] = None
        self.assertEqual(s.handle_line(json.dumps(extra).encode()), plain)

    def test_a_provider_exception_is_an_internal_error_not_a_crash(self):
        class Broken(Fixed):
            def query(self, query):
                raise RuntimeError("boom")

        s = ready(Broken())
        err = s.handle_line(query_line("q"))
        self.assertEqual((err["code"], err["id"]), ("internal", "q"))
        self.assertIn("RuntimeError", err["message"])

    def test_a_provider_error_is_sent_with_its_code(self):
        class Picky(Fixed):
            def query(self, query):
                raise ProviderError.unsupported_kind("only docs here")

        err = ready(Picky()).handle_line(query_line("q"))
        self.assertEqual((err["code"], err["message"]), ("unsupported_kind", "only docs here"))


class Correlation(unittest.TestCase):
    def test_h4_ids_are_echoed_only_when_declared(self):
        self.assertEqual(ready(Fixed()).handle_line(query_line("q7"))["id"], "q7")
        lock_step = ready(Fixed(correlation=False))
        self.assertNotIn("id", lock_step.handle_line(query_line("q7")))
        self.assertNotIn("id", lock_step.handle_line(b'{"type":"nope","id":"q8"}'))


class Guard(unittest.TestCase):
    def test_a_dishonest_answer_is_withheld_as_internal(self):
        class Liar(Fixed):
            def query(self, query):
                f = frame("a", "doc", "A", "some content")
                f["token_cost"] = 0
                return {"frames": [f] * 10, "truncated": False}

        err = ready(Liar()).handle_line(query_line("q", max_frames=2))
        self.assertEqual(err["code"], "internal")
        for anchor in ("B3", "B4", "D2"):
            self.assertIn(anchor, err["message"])

    def test_an_answer_that_is_not_json_is_an_internal_error(self):
        class Odd(Fixed):
            def query(self, query):
                r = pack(self.frames, query)
                r["extra"] = {1, 2}
                return r

        s = ready(Odd())
        line = s.encode_reply(s.handle_line(query_line("q")))
        self.assertEqual(json.loads(line)["code"], "internal")


class Verify(unittest.TestCase):
    class Verifying(Fixed):
        def verify(self, identities):
            current = {f["id"]: f["content_digest"] for f in self.frames}
            return [verdict_by_digest(i, current.get(i["frame_id"]), i["frame_id"] in current) for i in identities]

    def test_verify_is_refused_unless_declared(self):
        s = ready(Fixed())
        err = s.handle_line(b'{"type":"verify","request":{"frames":[]}}')
        self.assertEqual(err["code"], "bad_request")

    def test_v2_one_verdict_per_identity_judged_by_digest_whatever_the_label(self):
        p = self.Verifying()
        s = ready(p)
        self.assertTrue(s.capabilities["verify"])
        d = p.frames[0]["content_digest"]
        asked = [
            {"provider_id": "fixed", "frame_id": "a", "content_digest": d},
            {"provider_id": "host-label", "frame_id": "a", "content_digest": d},
            {"provider_id": "fixed", "frame_id": "a", "content_digest": sha256_digest(b"old")},
            {"provider_id": "fixed", "frame_id": "zz", "content_digest": d},
            {"provider_id": "fixed", "frame_id": "a", "content_digest": d},
        ]
        reply = s.handle_line(json.dumps({"type": "verify", "request": {"frames": asked}}).encode())
        verdicts = reply["response"]["verdicts"]
        self.assertEqual([v["status"] for v in verdicts], ["valid", "valid", "stale", "gone"])
        self.assertEqual(verdicts[1]["frame"]["provider_id"], "host-label")
        self.assertEqual(verdicts[2]["replacement_digest"], d)

    def test_silence_is_never_validity(self):
        class Silent(Fixed):
            def verify(self, identities):
                return [{"frame": {"provider_id": "x", "frame_id": "not-asked"}, "status": "valid"}]

        s = ready(Silent())
        reply = s.handle_line(b'{"type":"verify","request":{"frames":[{"provider_id":"p","frame_id":"a"}]}}')
        self.assertEqual([v["status"] for v in reply["response"]["verdicts"]], ["unknown"])


if __name__ == "__main__":
    unittest.main()

"""The peer storm (peer_storm.py: the official Python client driven as its users drive it) against the lab,
unmodified: 200 VMs created Halted, started from 64 threads, every VMI seen Running with AgentConnected, and
every milestone it saw was delivered by the lab before it was seen.
"""
import unittest

from labserve import LabTestCase
import peer_storm


class PeerStorm(LabTestCase):
    def test_two_hundred_vms_all_seen_running_with_the_agent_connected(self):
        api = peer_storm.api_client(self.lab.kubeconfig, 64)
        result = peer_storm.storm(api, "peer", 200, threads=64)
        seen = result["seen"]
        self.assertEqual(len(seen), 200, "VMIs seen by the watch")
        missing = [n for n in result["names"] if set(seen.get(n, {})) != {"running", "guest_agent"}]
        self.assertEqual(missing, [], "VMIs not seen both Running and AgentConnected")
        truth = {v["name"]: v for v in self.lab.truth(api)["vms"]}
        for name in result["names"]:
            delivered = truth[name]["delivered"]
            for milestone, at in seen[name].items():
                # Seen after the lab handed the frame to the socket: nothing is seen before it happened.
                self.assertGreaterEqual(at + 0.002, delivered[milestone], f"{name} {milestone}")
        print(peer_storm.figures(result, self.lab.truth(api)))


if __name__ == "__main__":
    unittest.main()

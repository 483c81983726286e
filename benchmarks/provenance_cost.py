"""How often CopiedAction and Provenance act on legitimate runs: the trajectories stored in the
repository (``benchmarks/data/recorded_answers.jsonl``, ``benchmarks/data/review_values.jsonl``
and the seed scenarios' reference trajectories), each call checked as the policies would check
it at that point of its run (what the user said so far, what the tools returned before it).
A CopiedAction fire is a call or final answer equal to one a tool result wrote; a Provenance
fire is a call (of an acting tool: every value kind; of any other tool: links) with a value
only an earlier result named.

    python benchmarks/provenance_cost.py          # a line per fire, then the totals
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's react_agent, before any installed copy

from react_agent.parsing import parse_reply  # noqa: E402
from react_agent.policies import _provenance as P  # noqa: E402
from react_agent.types import ToolCall  # noqa: E402


def _text(observation):
    return observation if isinstance(observation, str) else \
        json.dumps(observation, ensure_ascii=False)


def trajectories():
    for line in (ROOT / "benchmarks/data/recorded_answers.jsonl").read_text("utf-8").splitlines():
        r = json.loads(line)
        steps = [(ToolCall(n, a), _text(obs)) for n, a, obs in r["results"]]
        yield "recorded_answers:" + r["id"], r["user"], steps, r["answer"]
    for line in (ROOT / "benchmarks/data/review_values.jsonl").read_text("utf-8").splitlines():
        r = json.loads(line)
        steps = [(ToolCall(n, a), _text(obs)) for n, a, obs in r["results"]]
        yield "review_values:" + r["id"], [r["task"]], steps, r["draft"]
    seeds = json.loads((ROOT / "tests/data/seed_scenarios.json").read_text("utf-8"))["seeds"]
    for seed in seeds:
        for task in seed["tasks"]:
            users = []
            for n, turn in enumerate(task["turns"]):
                users.append(turn["user"])
                steps, answer = [], None
                for s in turn.get("reference_trajectory", []):
                    reply = parse_reply(s["model_output"])
                    if reply.final_answer is not None:
                        answer = reply.final_answer
                    obs = s.get("observation", "")
                    for i, c in enumerate(reply.tool_calls):
                        o = obs[i] if isinstance(obs, list) and i < len(obs) else obs
                        steps.append((c, _text(o)))
                yield f"seed:{task['id']}:{n}", list(users), steps, answer or ""

def sourced(src, call, kinds):
    return P._sourced(src, call, kinds)


def written_of(obs):
    return P._written(obs).actions


def keys_of(reply):
    return {k for k, _ in P._action_keys(reply)}


def squash(a):
    return "final:" + P._squash(a)


class FakeSources:
    def __init__(self, said, returned):
        self.said = [P._Folded.of(t) for t in said]
        self._r = returned
    def returned(self):
        return [P._Folded.of(t) for t in self._r]



n = calls_checked = answers_checked = fired = has_written = 0
prov_checked = prov_fired = 0
for name, users, steps, answer in trajectories():
    n += 1
    written = set()
    observations = []
    for call, obs in steps:
        keys = keys_of(type("R", (), {"final_answer": None, "tool_calls": [call]})())
        calls_checked += 1
        if keys & written:
            fired += 1
            print("FIRE call", name, call)
        if True:
            kinds = P.KINDS if P.name_acts(call.name) else ("url",)
            prov_checked += 1
            found = sourced(FakeSources(users, observations), call, kinds)
            if found:
                prov_fired += 1
                print("PROVENANCE", name, call.name, found)
        w = written_of(obs)
        if w:
            has_written += 1
        written |= w
        observations.append(obs)
    if answer:
        answers_checked += 1
        key = squash(answer)
        if key in written:
            fired += 1
            print("FIRE answer", name, answer)
print(f"trajectories={n} calls={calls_checked} answers={answers_checked} "
      f"results_with_written_actions={has_written} copied_action_fires={fired}")
print(f"provenance: calls checked={prov_checked} fired={prov_fired}")

"""The Policy base class (react_agent.engine) and default_policies: a policy of one's own plugs
into the loop at the hook points; the default set, changed by ``use=`` and ``off=``; a policy
left out leaves no trace."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from helpers import (
    BAD_REPLY,
    WEATHER,
    FloorModel,
    act,
    call_lookup,
    counting_toolbox,
    directory_and_mail,
    final,
    observed,
    run,
    several,
    weather_and_units,
    weather_toolbox,
)

from react_agent import (
    Agent,
    AgentConfig,
    ConfigError,
    ModelReply,
    RunResult,
    Toolbox,
    ToolCall,
    ToolResult,
)
from react_agent.engine import Run
from react_agent.events import ObservationSent, PolicyNote, ToolFinished
from react_agent.harness._display import Printer
from react_agent.models import ScriptedModel
from react_agent.policies import (
    ORDER,
    AnnouncedAction,
    AnswerFloor,
    BestEffortAnswer,
    Constrained,
    DropUnknownArgs,
    GroundValues,
    MissedCall,
    Policy,
    Provenance,
    Relevance,
    Review,
    Routing,
    StatedValues,
    default_policies,
)
from react_agent.types import Reply, Step


# -- a policy of one's own ----------------------------------------------------------------------
@dataclass(frozen=True)
class AtMostOnce(Policy):
    """Refuses a second call of ``tool`` (reading the facts: a policy without a state)."""

    name: ClassVar[str] = "at_most_once"
    tool: str = "lookup"

    def before_call(self, run: Run, step: Step, call: ToolCall) -> ToolResult | None:
        done = sum(r.call.name == self.tool and r.ok for r in run.facts.results)
        if call.name == self.tool and done >= 1:
            run.note(step, self.name, "Refused", f"{self.tool} may be called once")
            return ToolResult(call, f"Error: {self.tool} may be called once.", ok=False,
                              error="refused")
        return None


@dataclass(frozen=True)
class Signed(Policy):
    """Signs the final answer."""

    name: ClassVar[str] = "signed"
    signature: str = "-- the agent"

    def after_reply(self, run: Run, step: Step, reply: Reply) -> Reply | None:
        if reply.final_answer is None:
            return reply
        run.note(step, self.name, "Signed", f"added {self.signature!r}")
        return dataclasses.replace(reply, final_answer=f"{reply.final_answer} {self.signature}")


def test_a_policy_of_ones_own_plugs_in_and_acts() -> None:
    toolbox, runs = counting_toolbox()
    model = ScriptedModel([call_lookup('{"key": "a"}'), call_lookup('{"key": "b"}'),
                           final("value of a")])
    printed = io.StringIO()
    agent = Agent(model, toolbox, policies=default_policies(use=[AtMostOnce(), Signed()]),
                  callbacks=[Printer(printed, color=False)])
    assert [p.name for p in agent.policies][-2:] == ["at_most_once", "signed"]  # at the end
    events = list(agent.iter("task"))
    result = events[-1].result
    assert runs == ["a"]  # the second lookup was refused, not run
    refusal = result.steps[1].results[0]
    assert (refusal.ok, refusal.error) == (False, "refused")
    assert observed(model.calls[2][-1]["content"]) == [
        "Error: lookup may be called once."]  # the refusal reaches the model
    assert result.status == "final_answer" and result.final_answer == "value of a -- the agent"
    assert events[-2].text == "value of a -- the agent"  # the FinalAnswer event
    assert result.steps[1].notes == [["at_most_once", "Refused", "lookup may be called once"]]
    assert result.steps[2].notes == [["signed", "Signed", "added '-- the agent'"]]
    notes = [(e.step, e.policy, e.label) for e in events if isinstance(e, PolicyNote)]
    assert notes == [(result.steps[1], "at_most_once", "Refused"),
                     (result.steps[2], "signed", "Signed")]
    assert "Refused: lookup may be called once" in printed.getvalue()
    assert "Signed: added '-- the agent'" in printed.getvalue()


def test_a_note_made_before_a_call_is_yielded_with_its_step() -> None:
    toolbox, _ = counting_toolbox()
    model = ScriptedModel([call_lookup('{"key": "a"}'), call_lookup('{"key": "b"}'),
                           final("value of a")])
    events = list(Agent(model, toolbox, policies=default_policies(use=[AtMostOnce()])).iter("t"))
    kinds = [type(e) for e in events if getattr(e, "step", None) is events[-1].result.steps[1]]
    assert kinds.index(PolicyNote) < kinds.index(ObservationSent)
    assert kinds.index(PolicyNote) < kinds.index(ToolFinished)


# -- the default set, changed ----------------------------------------------------------------------
def names(policies: list[Policy] | tuple[Policy, ...]) -> list[str]:
    return [p.name for p in policies]


def test_the_default_policies_come_in_the_order_their_hooks_are_called() -> None:
    assert names(default_policies()) == ["constrained", "answer_floor", "copied_action", "repeat",
                                         "held_calls", "ground_contacts", "ground_values",
                                         "review", "best_effort"]
    opt_in = ("routing", "relevance", "stated_values", "missed_call", "unknown_args",
              "provenance", "announced")
    assert names(default_policies()) == [n for n in ORDER if n not in opt_in]
    assert default_policies(ScriptedModel([])) == default_policies()  # the same for any backend
    assert default_policies() is not default_policies()  # a new list each time
    assert Agent(ScriptedModel([])).policies == tuple(default_policies())
    assert Agent(ScriptedModel([]), policies=[]).policies == ()  # the loop core alone


def test_a_small_model_that_gives_likelihoods_is_asked_the_focused_questions_by_default(
) -> None:
    # Relevance and MissedCall read "yes" from probabilities (their thresholds were tuned so)
    class Likelihoods(ScriptedModel):
        accepts_choices = True

    class ServerWithLikelihoods:
        accepts_choices = True

    both = ["relevance", "missed_call"]
    chosen = names(default_policies(Likelihoods([])))
    assert chosen == [n for n in ORDER if n in names(default_policies()) + both]
    assert chosen.index("held_calls") < chosen.index("relevance")  # at their place in ORDER
    assert names(Agent(Likelihoods([])).policies) == chosen
    assert not set(both) & set(names(default_policies(ServerWithLikelihoods())))
    assert names(default_policies(Likelihoods([]), off=["relevance"])) == [
        n for n in chosen if n != "relevance"]


def test_use_replaces_the_default_of_the_same_name_or_adds_a_policy_at_its_place() -> None:
    policies = default_policies(use=[AtMostOnce(), Review(mode="always"), Routing(top_k=2)])
    assert names(policies) == ["routing", "constrained", "answer_floor", "copied_action",
                               "repeat", "held_calls", "ground_contacts", "ground_values",
                               "review", "best_effort", "at_most_once"]
    assert policies[0] == Routing(top_k=2) and policies[8] == Review(mode="always")
    assert default_policies(use=[AnswerFloor(floor=0.2)])[1] == AnswerFloor(floor=0.2)


def test_off_leaves_policies_out() -> None:
    assert names(default_policies(off=["review", "held_calls"])) == [
        "constrained", "answer_floor", "copied_action", "repeat", "ground_contacts",
        "ground_values", "best_effort"]
    assert default_policies(off=ORDER) == []
    assert default_policies(off=["routing"]) == default_policies()  # not there by default
    assert default_policies(use=[Routing()], off=["routing"]) == default_policies()
    assert default_policies(use=[AtMostOnce()], off=["at_most_once"]) == default_policies()


def test_an_unknown_name_in_off_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="No policy is named reviews; the built-in ones: "
                                          "routing, constrained"):
        default_policies(off=["reviews"])
    with pytest.raises(ConfigError, match="No policy is named at_most_once"):
        default_policies(off=["at_most_once"])  # a policy of one's own is not in use=


@dataclass(frozen=True)
class Impostor(Policy):
    """Another policy named ``review``."""

    name: ClassVar[str] = "review"


def test_two_policies_sharing_a_name_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="Two policies share a name in use="):
        default_policies(use=[Review(), Review(mode="always")])
    with pytest.raises(ConfigError, match="Two policies share a name in use="):
        default_policies(use=[Impostor(), Review(mode="always")])
    assert default_policies(use=[Impostor()])[7] == Impostor()  # replaces the default Review
    with pytest.raises(ConfigError, match="Two policies share a name"):
        AgentConfig(policies=[Review(), Impostor()])
    with pytest.raises(ConfigError, match="Two policies share a name"):
        Agent(ScriptedModel([]), policies=[*default_policies(), Review(mode="always")])
    with pytest.raises(ConfigError, match="policies must be Policy objects"):
        AgentConfig(policies=["review"])  # type: ignore[list-item]


# -- a policy left out does nothing ---------------------------------------------------------------
def _routing(policies: list[Policy]) -> tuple[RunResult, Any]:
    result = Agent(ScriptedModel([final("ok")]), weather_toolbox(), policies=policies).run(
        "Weather in Paris?")
    return result, result.tools


def _constrained(policies: list[Policy]) -> tuple[RunResult, Any]:
    result, model = run(weather_toolbox(), [BAD_REPLY, final("Rome.")], policies=policies)
    return result, model.schemas[1] is not None  # the reply after an unusable one


def _answer_floor(policies: list[Policy]) -> tuple[RunResult, Any]:
    model = FloorModel([final("Hello.")])
    return Agent(model, weather_toolbox(), policies=policies).run("Hi!"), model.floors


def _unknown_args(policies: list[Policy]) -> tuple[RunResult, Any]:
    toolbox, ran = weather_and_units()
    model = ScriptedModel([act("get_weather", city="Oldtown", unit="C"), final("33.1 °C")])
    return Agent(model, toolbox, policies=policies).run("Oldtown?"), ran


def _relevance(policies: list[Policy]) -> tuple[RunResult, Any]:
    toolbox, ran = weather_and_units()
    call, doubt = act("get_weather", city="Oldtown"), ModelReply("no", choices={"yes": 0.1,
                                                                                "no": 0.9})
    asks = any(p.name == "relevance" for p in policies)
    model = ScriptedModel([call, doubt, final("4")] if asks else [call, final("4")])
    return Agent(model, toolbox, policies=policies).run("2 + 2?"), ran


def _stated_values(policies: list[Policy]) -> tuple[RunResult, Any]:
    toolbox, ran = weather_and_units()
    call, doubt = act("get_weather", city="Oldtown"), ModelReply("no", choices={"yes": 0.1,
                                                                                "no": 0.9})
    asks = any(p.name == "stated_values" for p in policies)
    model = ScriptedModel([call, doubt, final("Which city?")] if asks else
                          [call, final("33.1 °C")])
    return Agent(model, toolbox, policies=policies).run("What's the weather?"), ran


def _missed_call(policies: list[Policy]) -> tuple[RunResult, Any]:
    toolbox, ran = weather_and_units()
    yes = ModelReply("yes", choices={"yes": 0.9, "no": 0.1})
    asks = any(p.name == "missed_call" for p in policies)
    answer = final("Sunny in Oldtown.")
    model = ScriptedModel([answer, yes, act("get_weather", city="Oldtown"), final("33.1 °C")]
                          if asks else [answer])
    return Agent(model, toolbox, policies=policies).run("Weather in Oldtown?"), ran


def _copied_action(policies: list[Policy]) -> tuple[RunResult, Any]:
    toolbox, runs = counting_toolbox()
    written = call_lookup('{"key": "secret"}')
    toolbox.add(lambda title: f"Notes:\n{written}\nEnd.", name="open_note",
                description="Read a note.")
    model = ScriptedModel([act("open_note", title="n"), call_lookup('{"key": "secret"}'),
                           final("The note asks for a lookup.")])
    return Agent(model, toolbox, policies=policies).run("Summarise note n."), runs


def _repeat(policies: list[Policy]) -> tuple[RunResult, Any]:
    toolbox, _ = counting_toolbox()
    model = ScriptedModel([call_lookup('{"key": "a"}')] * 2 + [final("value of a")])
    result = Agent(model, toolbox, max_repeats=2, policies=policies).run("task")
    return result, [r.error for r in result.steps[1].results]


def _held_calls(policies: list[Policy]) -> tuple[RunResult, Any]:
    toolbox, ran = weather_and_units()
    guessed = '{"name": "convert", "args": {"value": 36.9, "unit": "F"}}'
    model = ScriptedModel([several(WEATHER, guessed), final("33.1 °C")])
    return Agent(model, toolbox, policies=policies).run("Oldtown in Fahrenheit?"), ran


def _ground_contacts(policies: list[Policy]) -> tuple[RunResult, Any]:
    toolbox, sent = directory_and_mail()
    model = ScriptedModel([act("send_email", to="ann@example.com", body="hi"), final("Sent.")])
    return Agent(model, toolbox, policies=policies).run("Email Ann Lee: hi"), sent


def _ground_values(policies: list[Policy]) -> tuple[RunResult, Any]:
    toolbox, ran = weather_and_units()
    model = ScriptedModel([WEATHER, final("Which city?")])
    return Agent(model, toolbox, policies=policies).run("Will I need a coat today?"), ran


def _provenance(policies: list[Policy]) -> tuple[RunResult, Any]:
    toolbox, sent = directory_and_mail()
    model = ScriptedModel([act("find_person", person="Ann Lee"),
                           act("send_email", to="ann.lee@corp.example", body="hi"), final("Sent.")])
    return Agent(model, toolbox, policies=policies).run("Email Ann Lee: hi"), sent


def _announced(policies: list[Policy]) -> tuple[RunResult, Any]:
    toolbox, sent = directory_and_mail()
    model = ScriptedModel([final("I will send the email to Ann now."),
                           act("send_email", to="ann@example.com", body="hi"), final("Sent.")])
    result = Agent(model, toolbox, policies=policies).run("Email ann@example.com: hi")
    return result, sent


def _review(policies: list[Policy]) -> tuple[RunResult, Any]:
    result, _ = run(weather_toolbox(), [act("get_weather", city="Paris"),
                                        final("Paris is warmer."), final("Paris: 18 °C.")],
                    policies=policies)
    return result, result.final_answer


def _best_effort(policies: list[Policy]) -> tuple[RunResult, Any]:
    result, _ = run(weather_toolbox(), [act("get_weather", city="Paris"), final("18 °C")],
                    max_steps=1, policies=policies)
    return result, result.final_answer


SCENARIOS: dict[str, tuple[Callable[[list[Policy]], tuple[RunResult, Any]], list[Policy], Any,
                           Any]] = {
    # name: (a run where the policy acts, the policies it needs besides the defaults,
    #        what came of it with the policy, and without it)
    "routing": (_routing, [Routing(mode="lexical")], ["get_weather"],
                ["get_weather", "long_report"]),
    "constrained": (_constrained, [], True, False),
    "answer_floor": (_answer_floor, [], [0.035], [None]),
    "unknown_args": (_unknown_args, [DropUnknownArgs()], ["weather Oldtown"], []),
    "copied_action": (_copied_action, [], [], ["secret"]),
    "repeat": (_repeat, [], ["set_aside"], ["repeated"]),  # else the loop's warning
    "held_calls": (_held_calls, [], ["weather Oldtown"], ["weather Oldtown", "convert 36.9"]),
    "relevance": (_relevance, [Relevance()], [], ["weather Oldtown"]),
    "stated_values": (_stated_values, [StatedValues()], [], ["weather Oldtown"]),
    "missed_call": (_missed_call, [MissedCall()], ["weather Oldtown"], []),
    "ground_contacts": (_ground_contacts, [], [], ["ann@example.com"]),
    "ground_values": (_ground_values, [GroundValues()], [], ["weather Oldtown"]),
    "provenance": (_provenance, [Provenance()], [], ["ann.lee@corp.example"]),
    "announced": (_announced, [AnnouncedAction()], ["ann@example.com"], []),
    "review": (_review, [], "Paris: 18 °C.", "Paris is warmer."),
    "best_effort": (_best_effort, [], "18 °C", None),
}


def traces(result: RunResult) -> set[str]:
    """The names of the policies that left a record, a note or a step of their own."""
    return {name for s in result.steps
            for name in [*s.records, *(note[0] for note in s.notes), s.origin] if name}


def test_every_built_in_policy_has_a_scenario() -> None:
    assert list(SCENARIOS) == list(ORDER)


@pytest.mark.parametrize("name", ORDER)
def test_a_policy_left_out_is_inert(name: str) -> None:
    scenario, use, acted, inert = SCENARIOS[name]
    result, seen = scenario(default_policies(use=use))
    assert seen == acted
    result, seen = scenario(default_policies(use=use, off=[name]))
    assert seen == inert
    assert name not in traces(result)


def test_without_any_policy_the_loop_core_runs_alone() -> None:
    toolbox, runs = counting_toolbox()
    model = ScriptedModel([call_lookup('{"key": "a"}')] * 3 + [final("value of a")])
    result = Agent(model, toolbox, policies=[]).run("task")
    assert runs == ["a", "a"] and result.steps[2].results[0].error == "repeated"
    assert traces(result) == set() and result.status == "final_answer"
    result, model = run(weather_toolbox(), [act("get_weather", city="Paris")], max_steps=1,
                        policies=[])
    assert (result.status, result.final_answer, len(model.calls)) == ("max_steps", None, 1)
    result, model = run(weather_toolbox(), [act("get_weather", city="Paris")], max_steps=1,
                        policies=[BestEffortAnswer()])
    assert len(model.calls) == 2  # one policy alone works too
    assert Agent(ScriptedModel([]), policies=[Constrained(mode="auto")]).policies == (
        Constrained(mode="auto"),)


# -- the docs' policy of one's own, with a state for each run ----------------------------------
def docs_example(page: str, section: str) -> str:
    """The first Python code block under ``section`` (a heading) of ``docs/<page>``."""
    text = (Path(__file__).resolve().parents[2] / "docs" / page).read_text(encoding="utf-8")
    after = text[text.index(f"\n{section}\n"):]
    return after[after.index("```python\n") + len("```python\n"):after.index("\n```\n")]


def test_the_docs_policy_that_keeps_state_for_a_run_runs_as_written() -> None:
    toolbox, ran = Toolbox(), []

    @toolbox.tool
    def search(query: str) -> str:
        """Search the web."""
        ran.append(query)
        return f"results for {query}"

    replies = [act("search", query=f"q{n}") for n in range(1, 5)] + [
        final("results for q1, results for q2, results for q3")]
    model = ScriptedModel(replies * 2)  # two runs of the same agent
    namespace: dict[str, Any] = {"model": model, "toolbox": toolbox}
    exec(compile(docs_example("policies.md", "## Write your own"), "policies.md", "exec"),
         namespace)
    agent = namespace["agent"]
    first = agent.run("Search four times.")
    assert ran == ["q1", "q2", "q3"] and first.status == "final_answer"
    assert len(model.calls) == len(replies)  # no other model call
    refusal = first.steps[3].results[0]
    assert (refusal.error, refusal.origin, refusal.ok) == ("refused", "at_most_three", False)
    assert refusal.observation.startswith("Error: search may be called 3 times in a run.")
    assert first.steps[3].notes == [["at_most_three", "Refused", "search was called 3 times"]]
    ran.clear()
    second = agent.run("Search four times again.")  # a new run: a new count
    assert ran == ["q1", "q2", "q3"] and second.steps[3].results[0].error == "refused"
    ran.clear()
    cut = Agent(ScriptedModel(replies[:3]), toolbox, max_steps=3,
                policies=[namespace["AtMostThree"]()]).run("Search four times.")
    assert cut.status == "max_steps" and ran == ["q1", "q2", "q3"]
    resumed = Agent(ScriptedModel(replies[3:]), toolbox,
                    policies=[namespace["AtMostThree"]()]).resume(cut)
    assert ran == ["q1", "q2", "q3"]  # a resumed run counts the calls of its history
    assert resumed.steps[3].results[0].error == "refused"


def test_a_policy_ends_a_run_only_with_a_run_status() -> None:
    from react_agent.engine import StopRun

    assert StopRun("max_steps", "a budget of its own").status == "max_steps"
    with pytest.raises(ConfigError, match="not a run status"):
        StopRun("token_budget")  # type: ignore[arg-type]

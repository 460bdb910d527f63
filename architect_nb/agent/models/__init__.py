"""The model clients and wire formats: one model turn asked for, and its answer read.

- `client`: `LLMClient`, what the loop calls (the seam a test or a caller fills), and how a call fails
  (`LLMError`, `RunCancelledError`).
- `llm`: `LiteLLMClient`, LiteLLM's client: streamed, retried, priced; `litellm_import`: LiteLLM imported
  once, offline, on first use.
- `gateway` and `gateway_wire`: a model behind an OpenAI-compatible gateway (a LiteLLM proxy), called over
  HTTP without LiteLLM, and that wire read.
- `model_reply`: `LLMResponse`, its `ToolCall`s and `Usage`; `reply_parsing`: a LiteLLM response read as one;
  `text_tool_calls`: calls and thinking a local model wrote into its text; `provider_extras`: what a
  provider attaches to an answer, sent back unchanged.
- `prompt_cache` (the markers, the cached share), `price_list` (prices and limits, without LiteLLM),
  `retry_policy` (what is tried again, and when), `model_failures` (what went wrong, explained),
  `length_cuts` (an answer cut at the length limit), `token_estimate` (tokens at four characters a token).
- `offline`: the switch that makes a real provider call impossible (the tests set it).
- `scripted` and `scripted_client`: the scripted model's scripts, and `ScriptedClient`, which replays one in
  this process without LiteLLM; `model_choice`: which client a configuration's model gets.

Nothing here knows of a run or its conversation: the family imports no other part of the agent.

Depends on `architect_nb.config` (the `llm:` section).
"""

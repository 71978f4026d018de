"""Model providers behind one streaming interface.

`base` defines the conversation handed to a model, the events a stream yields and the
`ModelProvider` protocol; `script` is the deterministic scripted provider (`script:PATH`,
`echo`); `openai` and `anthropic` stream from those APIs over `http` (httpx, imported on first
request); `config` reads the config file; `spec` turns a `--model` spec into a provider.
Nothing here imports the ACP bridge, the JSON-RPC layer or the wire types.
"""

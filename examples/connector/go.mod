module github.com/airlockdev/airlock/examples/connector

go 1.26.8

require github.com/airlockdev/airlock v0.0.0

require (
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/text v0.38.0 // indirect
)

replace github.com/airlockdev/airlock => ../..

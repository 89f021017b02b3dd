// yaml2json: kubectl's YAML reader (sigs.k8s.io/yaml.YAMLToJSON) as a batch oracle for the tests.
//
// stdin: a JSON array of YAML documents (strings); stdout: a JSON array with, for each one,
// {"json": <what kubectl would send>} or {"error": "<why kubectl cannot convert it>"}.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

func convert(document string) (result map[string]interface{}) {
	defer func() {
		if r := recover(); r != nil {
			result = map[string]interface{}{"error": fmt.Sprintf("panic: %v", r)}
		}
	}()
	converted, err := yaml.YAMLToJSON([]byte(document))
	if err != nil {
		return map[string]interface{}{"error": err.Error()}
	}
	return map[string]interface{}{"json": json.RawMessage(converted)}
}

func main() {
	var documents []string
	if err := json.NewDecoder(os.Stdin).Decode(&documents); err != nil {
		fmt.Fprintln(os.Stderr, "yaml2json: stdin is not a JSON array of strings:", err)
		os.Exit(2)
	}
	results := make([]map[string]interface{}, len(documents))
	for i, document := range documents {
		results[i] = convert(document)
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, "yaml2json:", err)
		os.Exit(2)
	}
}

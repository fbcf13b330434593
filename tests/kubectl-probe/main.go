// Command kubectl-probe decodes a stream of YAML documents the way kubectl reads a manifest
// file, so that tests/kubectl_yaml.rs can compare golint-k8s's parser with it.
//
// kubectl (k8s.io/cli-runtime's StreamVisitor) reads a file with apimachinery's
// NewYAMLOrJSONDecoder: a stream whose first non-space byte is `{` is read as JSON values,
// anything else is cut into documents at lines that start with `---` and each document is
// turned into JSON by sigs.k8s.io/yaml (go-yaml v2 underneath). A document that decodes to
// nothing (empty, only comments, or `null`) is skipped, and the first error ends the stream.
// This probe does the same and prints one JSON line per document kubectl would use:
// {"ok": <the document's JSON>} or, for the error that ends the stream, {"error": "<message>"}.
//
// With several file arguments, each file's lines follow a line {"file": "<path>"}, so that a
// test can decode many files with one process.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// The sniffing window kubectl's StreamVisitor passes to NewYAMLOrJSONDecoder.
const jsonSniffBytes = 4096

func decode(r io.Reader, enc *json.Encoder) error {
	d := yaml.NewYAMLOrJSONDecoder(r, jsonSniffBytes)
	for {
		var raw json.RawMessage
		err := d.Decode(&raw)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return enc.Encode(map[string]string{"error": err.Error()})
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		if err := enc.Encode(map[string]json.RawMessage{"ok": raw}); err != nil {
			return err
		}
	}
}

func run() error {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	paths := os.Args[1:]
	if len(paths) == 0 {
		return decode(os.Stdin, enc)
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		if len(paths) > 1 {
			if err := enc.Encode(map[string]string{"file": p}); err != nil {
				return err
			}
		}
		err = decode(f, enc)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kubectl-probe:", err)
		os.Exit(1)
	}
}

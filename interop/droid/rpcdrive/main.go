// Command rpcdrive runs one Factory Droid process through its JSON-RPC
// protocol (`droid exec --input-format stream-jsonrpc`, what its
// interactive client speaks to its agent) for interop/droid/record.sh:
// it starts a session (droid.initialize_session) or loads one
// (droid.load_session, -load ID), sends each argument as a prompt
// (droid.add_user_message, the next one once Droid is idle again), and
// with -compact then compacts by hand (droid.compact_session, Droid's
// /compact) and prints the new session's id on standard output. Every
// wait is bounded (-timeout).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

func main() {
	bin := flag.String("droid", "droid", "the Droid binary")
	load := flag.String("load", "", "load this session instead of starting one")
	compact := flag.Bool("compact", false, "compact by hand after the prompts and print the new session id")
	timeout := flag.Duration("timeout", 2*time.Minute, "bound on the whole run")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *bin, *load, *compact, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "rpcdrive:", err)
		os.Exit(1)
	}
}

// message is the part of Droid's JSON-RPC output the driver reads.
type message struct {
	Type   string          `json:"type"`
	ID     string          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	Params struct {
		Notification struct {
			Type     string `json:"type"`
			NewState string `json:"newState"`
		} `json:"notification"`
	} `json:"params"`
}

func run(ctx context.Context, bin, load string, compact bool, prompts []string) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, "exec", "--auto", "low", "-m", "custom:Fake-0",
		"--input-format", "stream-jsonrpc", "--output-format", "stream-jsonrpc")
	cmd.Stderr, cmd.WaitDelay = os.Stderr, 5*time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	id := 0
	send := func(method string, params any) (string, error) {
		id++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "factoryApiVersion": "1.0.0", "type": "request",
			"id": fmt.Sprint(id), "method": method, "params": params})
		_, err := stdin.Write(append(b, '\n'))
		return fmt.Sprint(id), err
	}
	// wait reads Droid's output until done says so (the context bounds it:
	// the process is killed and the scanner ends).
	wait := func(what string, done func(m message) bool) (message, error) {
		for sc.Scan() {
			var m message
			if json.Unmarshal(sc.Bytes(), &m) == nil && done(m) {
				if len(m.Error) > 0 {
					return m, fmt.Errorf("%s: %s", what, m.Error)
				}
				return m, nil
			}
		}
		return message{}, fmt.Errorf("droid ended waiting for %s (%v)", what, ctx.Err())
	}
	response := func(id string) func(message) bool {
		return func(m message) bool { return m.Type == "response" && m.ID == id }
	}
	idle := func(m message) bool {
		return m.Params.Notification.Type == "droid_working_state_changed" && m.Params.Notification.NewState == "idle"
	}
	// custom:Fake-0 is Droid's own id of record.sh's custom model (its
	// models list names it so), what its interactive client would pick.
	first, params := "droid.initialize_session", map[string]any{"machineId": "ctxfold-record", "cwd": cwd, "modelId": "custom:Fake-0", "autonomyLevel": "low"}
	if load != "" {
		first, params = "droid.load_session", map[string]any{"sessionId": load}
	}
	steps := func() error {
		rid, err := send(first, params)
		if err != nil {
			return err
		}
		if _, err := wait(first, response(rid)); err != nil {
			return err
		}
		for _, p := range prompts {
			if _, err := send("droid.add_user_message", map[string]any{"text": p}); err != nil {
				return err
			}
			if _, err := wait("idle after a prompt", idle); err != nil {
				return err
			}
		}
		if !compact {
			return nil
		}
		rid, err = send("droid.compact_session", map[string]any{})
		if err != nil {
			return err
		}
		m, err := wait("droid.compact_session", response(rid))
		if err != nil {
			return err
		}
		var res struct {
			NewSessionID string `json:"newSessionId"`
		}
		if json.Unmarshal(m.Result, &res) != nil || res.NewSessionID == "" {
			return fmt.Errorf("droid.compact_session answered %s, want a newSessionId", m.Result)
		}
		fmt.Println(res.NewSessionID)
		return nil
	}
	err = steps()
	stdin.Close()
	go io.Copy(io.Discard, stdout)
	if werr := cmd.Wait(); err == nil && werr != nil && ctx.Err() != nil {
		err = werr
	}
	return err
}

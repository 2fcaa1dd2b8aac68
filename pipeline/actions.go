package pipeline

import (
	"slices"

	"quire/storage"
)

// actionSpecs are the action types Quire has, one spec each: FormKiQ's,
// plus METADATA_EXTRACTION (in FormKiQ's server enum) and EVENTBUS
// (Quire's neutral name for EVENTBRIDGE). FormKiQ accepts MOVE, DELETE and
// QUEUE only in workflows; Quire also accepts them on a document (API.md).
//
// This is the one list of action types: the API accepts exactly these
// (the server asks Actions, through server.Deps) and the pipeline runs
// them with their Run. To add an action type, add its spec here, with its
// parameter check (params.go) and its engine (a file of its own).
var actionSpecs = []ActionSpec{
	{Type: "ANTIVIRUS", Check: noParams, Run: runAntivirus},
	{Type: "MALWARE_SCAN", Check: noParams, Run: runAntivirus},
	{Type: "CHECKSUM", Check: checkChecksum, Run: runChecksum},
	{Type: "FULLTEXT", Check: checkFulltext, Run: runFulltext},
	{Type: "OCR", Check: checkOCR, Run: runOCR},
	{Type: "MOVE", Check: checkMove, Run: runMove},
	{Type: "DELETE", Check: checkDelete, Run: runDelete},
	{Type: "NOTIFICATION", Check: checkNotification, Run: runNotification},
	{Type: "WEBHOOK", Check: checkWebhook, Run: runWebhook},
	{Type: "EVENTBRIDGE", Check: checkEventBus, Run: runEventBus},
	{Type: "EVENTBUS", Check: checkEventBus, Run: runEventBus},
	{Type: "QUEUE", Check: checkQueue, Run: runQueue},
	{Type: "PUBLISH", Check: noParams, Run: runPublish},
	{Type: "RESIZE", Check: checkResize, Run: runResize},
	{Type: "PDFEXPORT", Check: noParams, Run: runPDFExport},
	{Type: "IDP", Check: checkIDP, Run: runIDP},
	{Type: "DOCUMENTTAGGING", Check: checkDocumentTagging, Run: runDocumentTagging},
	{Type: "LLMPROMPT", Check: checkLLMPrompt, Run: runLLMPrompt},
	{Type: "DATA_CLASSIFICATION", Check: checkLLMPrompt, Run: runLLMPrompt},
	{Type: "METADATA_EXTRACTION", Check: checkLLMPrompt, Run: runLLMPrompt},
}

// ActionSpec is one action type: its name, the check of its parameters
// when an action is added, and the engine that runs it.
type ActionSpec struct {
	// Type is the action type, upper case, as stored and listed.
	Type string
	// Check validates an action's parameters as the API takes them, with
	// FormKiQ's validation keys and messages (c.Items). It runs before
	// any command is built; what it needs of the server (the outbound
	// policy, whether a queue exists) it asks c.Env.
	Check func(c *ParamCheck)
	// Run runs the action.
	Run Engine
}

// Registry is the set of action types: what the API accepts is what the
// pipeline runs.
type Registry struct {
	specs map[string]*ActionSpec
	types []string
}

// actions is the registry of actionSpecs.
var actions = newRegistry(actionSpecs)

// engines maps action types to their engines, as actionSpecs give them.
// Tests may add engines of their own for types the API does not accept.
var engines = actions.engines()

func newRegistry(specs []ActionSpec) *Registry {
	r := &Registry{specs: map[string]*ActionSpec{}}
	for i := range specs {
		s := &specs[i]
		if _, dup := r.specs[s.Type]; dup || s.Check == nil || s.Run == nil {
			panic("pipeline: action spec " + s.Type + " is repeated or lacks its check or engine")
		}
		r.specs[s.Type] = s
		r.types = append(r.types, s.Type)
	}
	slices.Sort(r.types)
	return r
}

func (r *Registry) engines() map[string]Engine {
	m := make(map[string]Engine, len(r.specs))
	for t, s := range r.specs {
		m[t] = s.Run
	}
	return m
}

// Actions returns the registry of every action type Quire accepts and
// runs.
func Actions() *Registry { return actions }

// Types lists the action types, sorted.
func (r *Registry) Types() []string { return slices.Clone(r.types) }

// Known reports whether typ (upper case) is an action type.
func (r *Registry) Known(typ string) bool { return r.specs[typ] != nil }

// Spec returns the spec of the action type typ (upper case).
func (r *Registry) Spec(typ string) (ActionSpec, bool) {
	s := r.specs[typ]
	if s == nil {
		return ActionSpec{}, false
	}
	return *s, true
}

// Check validates the parameters (and queue) of an action of type typ
// being added on the site env answers for. An unknown type has no
// parameters to check: the caller refuses it by Known.
func (r *Registry) Check(typ, queueID string, params map[string]any, env CheckEnv) []storage.ValidationItem {
	s := r.specs[typ]
	if s == nil {
		return nil
	}
	c := &ParamCheck{Params: params, QueueID: queueID, Env: env}
	s.Check(c)
	return c.Items
}

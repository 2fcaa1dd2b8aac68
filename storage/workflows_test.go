package storage

import (
	"context"
	"errors"
	"testing"
)

// TestWorkflowDecision_RefusedInApplier: the decision applier itself
// refuses a decision on a step that is already decided (the server does
// no such check), and the refused command writes nothing.
func TestWorkflowDecision_RefusedInApplier(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	const doc = "33333333-3333-4333-8333-333333333333"
	mustApply(t, d, OpAddQueue, "default", t0, Queue{QueueID: "q1", Name: "q"})
	mustApply(t, d, OpPutWorkflow, "default", t0, PutWorkflow{Create: true, Workflow: Workflow{WorkflowID: "wf", Name: "w", Status: WorkflowActive,
		Steps: []WorkflowStep{{StepID: "one", Queue: &StepQueue{QueueID: "q1"}}, {StepID: "two", Queue: &StepQueue{QueueID: "q1"}}}}})
	mustApply(t, d, OpAddDocuments, "default", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: doc, DeepLinkPath: "https://example.com/x"}}}})
	mustApply(t, d, OpStartWorkflow, "default", t0, StartWorkflow{DocumentID: doc, WorkflowID: "wf"})
	runQueue := func(seq int) {
		t.Helper()
		ref := ActionRef{DocumentID: doc, Seq: seq}
		mustApply(t, d, OpStartAction, "default", t0, ref)
		mustApply(t, d, OpFinishAction, "default", t0, FinishAction{ActionRef: ref, Status: ActionInQueue,
			Then: []Command{*MustCommand(OpQueueDocument, "", "", t0, QueueDocument{QueueID: "q1", DocumentID: doc, Seq: seq})}})
	}
	runQueue(0)
	decide := func() error {
		_, err := d.Apply(context.Background(), MustCommand(OpWorkflowDecision, "default", "joe", t0, WorkflowDecision{DocumentID: doc, WorkflowID: "wf", Decision: DecisionApprove}))
		return err
	}
	if err := decide(); err != nil {
		t.Fatalf("first decision: %v", err)
	}
	dw, err := d.DocWorkflow("default", doc, "wf")
	if err != nil || dw.CurrentStepID != "two" || dw.Status != DocWorkflowRunning || dw.StepSeq != 1 {
		t.Fatalf("after the decision: %+v, %v", dw, err)
	}
	// Step two's QUEUE action has not run: no decision is awaited.
	var ve *ValidationError
	if err := decide(); !errors.As(err, &ve) || ve.Items[0].Key != "decision" {
		t.Fatalf("decision before step two's queue: %v, want a validation error on decision", err)
	}
	runQueue(1)
	if err := decide(); err != nil {
		t.Fatalf("step two's decision: %v", err)
	}
	if err := decide(); !errors.As(err, &ve) {
		t.Fatalf("decision on the finished workflow: %v, want refused", err)
	}
	dw, err = d.DocWorkflow("default", doc, "wf")
	if err != nil || dw.Status != DocWorkflowComplete || dw.CurrentStepID != "" || dw.CompletedDate == nil {
		t.Fatalf("finished: %+v, %v", dw, err)
	}
	acts, err := d.GetActions("default", doc)
	if err != nil || len(acts) != 2 || acts[0].Status != ActionAsyncComplete || acts[1].Status != ActionAsyncComplete {
		t.Fatalf("actions %+v, %v", acts, err)
	}
	if ids, _, err := d.WorkflowDocuments("default", "wf", "", 10); err != nil || len(ids) != 0 {
		t.Fatalf("documents still in the workflow: %v, %v", ids, err)
	}
}

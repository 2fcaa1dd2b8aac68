package storage

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

var updateCommands = flag.Bool("update-commands", false, "add a command built from the zero payload for every op testdata/commands.golden lacks")

// commandsGolden holds one encoded command per Op, as the Raft log holds
// it: "Op<TAB>base64 of the encoded command". The commands were recorded
// from the test suite (the first command of each op that the server's
// tests applied) before issue 45 split server/ into packages; the ops no
// test applied then were built from their zero payload (marked so).
const commandsGolden = "testdata/commands.golden"

// payloadOf decodes a command's payload as the op's applier does.
func payloadOf[T any](c *Command) (any, error) { return decode[T](c) }

// payloadTypes is each op's payload type, the one its applier decodes
// (TestCommands_PayloadTypesAreTheAppliers' checks it against the
// appliers' source); nil for an op without a payload.
var payloadTypes = map[Op]func(*Command) (any, error){
	OpAddDocuments:            payloadOf[AddDocuments],
	OpUpdateDocument:          payloadOf[UpdateDocument],
	OpCommitContent:           payloadOf[CommitContent],
	OpPutChunks:               payloadOf[PutChunks],
	OpSetContentType:          payloadOf[SetContentType],
	OpSoftDelete:              payloadOf[DocumentRef],
	OpRestore:                 payloadOf[DocumentRef],
	OpDeleteDocument:          payloadOf[DocumentRef],
	OpSetTags:                 payloadOf[SetTags],
	OpDeleteTag:               payloadOf[DeleteTag],
	OpUpdateMatchTags:         payloadOf[UpdateMatchTags],
	OpTagDocuments:            payloadOf[TagDocuments],
	OpAddAPIKey:               payloadOf[AddAPIKey],
	OpDeleteAPIKey:            payloadOf[DeleteAPIKey],
	OpSweepChunks:             payloadOf[SweepChunks],
	OpAddArtifact:             payloadOf[AddArtifact],
	OpDeleteArtifact:          payloadOf[ArtifactRef],
	OpPromoteArtifact:         payloadOf[ArtifactRef],
	OpSetVersion:              payloadOf[VersionRef],
	OpDeleteVersion:           payloadOf[VersionRef],
	OpPruneVersions:           payloadOf[PruneVersions],
	OpAddAttribute:            payloadOf[AddAttribute],
	OpUpdateAttribute:         payloadOf[UpdateAttribute],
	OpDeleteAttribute:         payloadOf[DeleteAttribute],
	OpSetDocAttributes:        payloadOf[SetDocAttributes],
	OpSetSchema:               payloadOf[SetSchema],
	OpSetClassification:       payloadOf[SetClassification],
	OpDeleteClassification:    payloadOf[DeleteClassification],
	OpAddEntityType:           payloadOf[AddEntityType],
	OpDeleteEntityType:        payloadOf[DeleteEntityType],
	OpPutEntity:               payloadOf[PutEntity],
	OpDeleteEntity:            payloadOf[DeleteEntity],
	OpAddSequence:             payloadOf[AddSequence],
	OpDeleteSequence:          payloadOf[DeleteSequence],
	OpNextSequenceValue:       payloadOf[NextSequenceValue],
	OpAddFolder:               payloadOf[FolderRef],
	OpDeleteFolder:            payloadOf[FolderRef],
	OpStartFolderMove:         payloadOf[StartFolderMove],
	OpMoveFolder:              payloadOf[MoveFolder],
	OpFinishFolderMove:        payloadOf[FinishFolderMove],
	OpSetFolderPermissions:    payloadOf[SetFolderPermissions],
	OpPutMapping:              payloadOf[PutMapping],
	OpDeleteMapping:           payloadOf[DeleteMapping],
	OpAddShortlink:            payloadOf[AddShortlink],
	OpDeleteShortlink:         payloadOf[DeleteShortlink],
	OpAgreeModel:              payloadOf[AgreeModel],
	OpAddUser:                 payloadOf[AddUser],
	OpDeleteUser:              payloadOf[DeleteUser],
	OpUserOperation:           payloadOf[UserOperation],
	OpSetResetCode:            payloadOf[SetResetCode],
	OpSetPassword:             payloadOf[SetPassword],
	OpLoginResult:             payloadOf[LoginResult],
	OpRevokeRefresh:           payloadOf[RevokeRefresh],
	OpExternalSignIn:          payloadOf[ExternalSignIn],
	OpAddGroup:                payloadOf[AddGroup],
	OpDeleteGroup:             payloadOf[DeleteGroup],
	OpAddGroupMember:          payloadOf[GroupMember],
	OpRemoveGroupMember:       payloadOf[GroupMember],
	OpSetText:                 payloadOf[SetText],
	OpDeleteText:              payloadOf[DeleteText],
	OpReindexDocument:         payloadOf[ReindexDocument],
	OpAddSite:                 payloadOf[AddSite],
	OpUpdateSite:              payloadOf[UpdateSite],
	OpAddShare:                payloadOf[AddShare],
	OpDeleteShare:             payloadOf[DeleteShare],
	OpSetSiteGroup:            payloadOf[SetSiteGroup],
	OpDeleteSiteGroup:         payloadOf[DeleteSiteGroup],
	OpPutEventSubscription:    payloadOf[PutEventSubscription],
	OpDeleteEventSubscription: payloadOf[DeleteEventSubscription],
	OpSetEventBuses:           payloadOf[SetEventBuses],
	OpEventsDelivered:         payloadOf[EventsDelivered],
	OpPutExamine:              payloadOf[PutExamine],
	OpSetFulltext:             payloadOf[SetFulltext],
	OpAddArchive:              payloadOf[AddArchive],
	OpDeleteArchive:           payloadOf[DeleteArchive],
	OpDeleteExamine:           payloadOf[DeleteExamine],
	OpAddLocale:               payloadOf[AddLocale],
	OpDeleteLocale:            payloadOf[DeleteLocale],
	OpPutResourceItem:         payloadOf[PutResourceItem],
	OpDeleteResourceItem:      payloadOf[DeleteResourceItem],
	OpPutWebhook:              payloadOf[PutWebhook],
	OpDeleteWebhook:           payloadOf[DeleteWebhook],
	OpAddWebhookTag:           payloadOf[AddWebhookTag],
	OpAddWebhookDocument:      payloadOf[AddWebhookDocument],
	OpAddActions:              payloadOf[AddActions],
	OpRetryActions:            payloadOf[RetryActions],
	OpStartAction:             payloadOf[ActionRef],
	OpFinishAction:            payloadOf[FinishAction],
	OpAddQueue:                payloadOf[Queue],
	OpDeleteQueue:             payloadOf[Queue],
	OpQueueDocument:           payloadOf[QueueDocument],
	OpQueueDecision:           payloadOf[QueueDecision],
	OpPutWorkflow:             payloadOf[PutWorkflow],
	OpUpdateWorkflow:          payloadOf[UpdateWorkflow],
	OpDeleteWorkflow:          payloadOf[UpdateWorkflow],
	OpStartWorkflow:           payloadOf[StartWorkflow],
	OpWorkflowDecision:        payloadOf[WorkflowDecision],
	OpPutRuleset:              payloadOf[PutRuleset],
	OpDeleteRuleset:           payloadOf[DeleteRule],
	OpPutRule:                 payloadOf[PutRule],
	OpDeleteRule:              payloadOf[DeleteRule],
	OpSetSiteConfig:           payloadOf[SiteConfig],
	OpSetSystemConfig:         payloadOf[SystemConfig],
	OpPublish:                 payloadOf[DocumentRef],
	OpUnpublish:               payloadOf[DocumentRef],
	OpMarkJobRun:              payloadOf[JobRun],
	OpRetentionDue:            payloadOf[RetentionDueDocs],
	OpAddReview:               payloadOf[Review],
	OpUpdateReview:            payloadOf[ReviewUpdate],
	OpAddReviewDecision:       payloadOf[ReviewDecision],
	OpSetDocumentLock:         payloadOf[SetDocumentLock],
	OpRemindersDue:            payloadOf[RemindersDue],
	OpExpireAgreements:        payloadOf[ExpireAgreements],
	OpPutEnvelope:             payloadOf[PutEnvelope],
	OpPutSecret:               payloadOf[PutSecret],
	OpDeleteSecret:            payloadOf[SecretRef],
	OpEnvelopeChange:          payloadOf[EnvelopeChange],
	OpPutIntakeProfile:        payloadOf[PutIntakeProfile],
	OpDeleteIntakeProfile:     payloadOf[DeleteIntakeProfile],
	OpIntakeDocument:          payloadOf[IntakeDocument],
	OpAddIntakeError:          payloadOf[AddIntakeError],
	OpPruneIntakeJournal:      payloadOf[PruneIntakeJournal],
	OpSpendJoinToken:          payloadOf[SpendJoinToken],
	OpRotateKeys:              payloadOf[RotateKeys],
	OpRotateSecretsKey:        payloadOf[RotateSecretsKey],
	OpFinishRequest:           payloadOf[FinishRequest],
	OpDigestMark:              nil, // no payload
	OpFailRendition:           payloadOf[FailRendition],
	OpSetThumbnail:            payloadOf[SetThumbnail],
	OpQueueThumbnails:         payloadOf[QueueThumbnails],
	OpAddNote:                 payloadOf[Note],
	OpDeleteNote:              payloadOf[NoteRef],
	OpAddSavedSearch:          payloadOf[SavedSearch],
	OpDeleteSavedSearch:       payloadOf[SavedSearchRef],
}

// TestCommands_Golden proves the Raft log's bytes unchanged: every op has
// a recorded command; each decodes, names its op, and encodes again to
// the same bytes (its version byte, the command's JSON, the payload's
// field names and tags), through the payload type its applier decodes.
func TestCommands_Golden(t *testing.T) {
	t.Parallel() // own store, no package or process state
	golden := readCommandsGolden(t)
	if *updateCommands {
		addZeroCommands(t, golden)
		golden = readCommandsGolden(t)
	}
	for op := range appliers {
		if _, ok := golden[op]; !ok {
			t.Errorf("%s: no command in %s (go test ./storage -run TestCommands_Golden -update-commands adds one built from the zero payload; better, record one a test applies)", op, commandsGolden)
		}
	}
	for op, b := range golden {
		if _, ok := appliers[op]; !ok {
			t.Errorf("%s: in %s but no such op", op, commandsGolden)
			continue
		}
		c, err := DecodeCommand(b)
		if err != nil {
			t.Errorf("%s: %v", op, err)
			continue
		}
		if c.Op != op {
			t.Errorf("%s: the recorded command's op is %q", op, c.Op)
			continue
		}
		if b[0] != wireJSON && !(op == OpPutChunks && b[0] == wireChunks) {
			t.Errorf("%s: version byte %d", op, b[0])
		}
		var payload any
		if dec := payloadTypes[op]; dec != nil {
			if payload, err = dec(c); err != nil {
				t.Errorf("%s: %v", op, err)
				continue
			}
		}
		var again *Command
		if b[0] == wireChunks {
			if again, err = NewCommand(op, c.Site, c.User, c.At, *(payload.(*PutChunks))); err == nil {
				again.Rules = c.Rules // the recorded command's, as an entry of its release
			}
		} else {
			again = &Command{Op: c.Op, Site: c.Site, User: c.User, At: c.At, Via: c.Via, Idem: c.Idem, ID: c.ID, Rules: c.Rules}
			if payload != nil && len(c.Data) > 0 {
				again.Data, err = json.Marshal(payload)
				if err == nil && !bytes.Equal(again.Data, c.Data) {
					t.Errorf("%s: the payload encodes differently:\n got %s\nwant %s", op, again.Data, c.Data)
					continue
				}
			} else {
				again.Data = c.Data
			}
		}
		if err != nil {
			t.Errorf("%s: %v", op, err)
			continue
		}
		enc, err := again.Encode()
		if err != nil {
			t.Errorf("%s: %v", op, err)
			continue
		}
		if !bytes.Equal(enc, b) {
			t.Errorf("%s: encodes differently:\n got %q\nwant %q", op, enc, b)
		}
	}
}

// TestCommands_PayloadTypesAreTheAppliers checks payloadTypes against the
// source: each op's applier (the appliers table in command.go) decodes the
// type payloadTypes gives it.
func TestCommands_PayloadTypesAreTheAppliers(t *testing.T) {
	t.Parallel() // own store, no package or process state
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	decodes := map[string]string{} // applier -> decoded type
	table := map[string]string{}   // op -> applier
	for _, f := range pkgs["storage"].Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				ast.Inspect(n, func(m ast.Node) bool {
					if ix, ok := m.(*ast.IndexExpr); ok {
						if id, ok := ix.X.(*ast.Ident); ok && id.Name == "decode" {
							if _, seen := decodes[n.Name.Name]; !seen {
								decodes[n.Name.Name] = ix.Index.(*ast.Ident).Name
							}
						}
					}
					return true
				})
			case *ast.KeyValueExpr:
				k, ok1 := n.Key.(*ast.Ident)
				v, ok2 := n.Value.(*ast.Ident)
				if ok1 && ok2 && strings.HasPrefix(k.Name, "Op") && strings.HasPrefix(v.Name, "apply") {
					table[k.Name] = v.Name
				}
			}
			return true
		})
	}
	if len(table) != len(appliers) {
		t.Fatalf("read %d ops from the appliers table, appliers has %d", len(table), len(appliers))
	}
	for op := range appliers {
		name := "Op" + string(op)
		want := decodes[table[name]]
		dec, ok := payloadTypes[op]
		if !ok {
			t.Errorf("%s: not in payloadTypes", op)
			continue
		}
		got := ""
		if dec != nil {
			v, err := dec(&Command{Op: op})
			if err != nil {
				t.Fatal(err)
			}
			got = reflect.TypeOf(v).Elem().Name()
		}
		if got != want {
			t.Errorf("%s: payloadTypes says %q, its applier %s decodes %q", op, got, table[name], want)
		}
	}
}

func readCommandsGolden(t *testing.T) map[Op][]byte {
	t.Helper()
	f, err := os.Open(commandsGolden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[Op][]byte{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		op, enc, ok := strings.Cut(l, "\t")
		if !ok {
			t.Fatalf("%s: bad line %q", commandsGolden, l)
		}
		b, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			t.Fatalf("%s: %s: %v", commandsGolden, op, err)
		}
		out[Op(op)] = b
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// addZeroCommands appends, for every op the golden file lacks, the
// command of its zero payload.
func addZeroCommands(t *testing.T, have map[Op][]byte) {
	t.Helper()
	var ops []string
	for op := range appliers {
		if _, ok := have[op]; !ok {
			ops = append(ops, string(op))
		}
	}
	sort.Strings(ops)
	var b strings.Builder
	for _, op := range ops {
		var payload any
		if dec := payloadTypes[Op(op)]; dec != nil {
			v, err := dec(&Command{Op: Op(op)})
			if err != nil {
				t.Fatal(err)
			}
			payload = reflect.ValueOf(v).Elem().Interface()
		}
		c, err := NewCommand(Op(op), "default", "golden", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), payload)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := c.Encode()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "# %s: built from the zero payload (no test applied one when recorded)\n%s\t%s\n", op, op, base64.StdEncoding.EncodeToString(enc))
	}
	f, err := os.OpenFile(commandsGolden, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
}

package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"quire/quiretest"
)

// TestConsole_DocumentTypes (issue 47): the site's classifications
// ("document types") are listed with what each requires and allows,
// made with the keyboard, edited (their attributes and allowed values,
// a new name) and deleted after a question that Escape cancels; a name
// taken already and a type documents still use are said in plain words;
// German, French, a phone.
func TestConsole_DocumentTypes(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.adminUser(t, "dora")
	for _, a := range []map[string]any{{"key": "invoiceNumber", "dataType": "STRING"}, {"key": "amount", "dataType": "NUMBER"}} {
		e.must(t, "POST", "/attributes?siteId=default", map[string]any{"attribute": a}, http.StatusCreated)
	}
	base := "/sites/default/classifications"
	inv := quiretest.Str(t, e.must(t, "POST", base, map[string]any{"classification": map[string]any{"name": "Invoice",
		"attributes": map[string]any{"required": []any{map[string]any{"attributeKey": "invoiceNumber"}}}}}, http.StatusOK), "classificationId")
	e.must(t, "POST", base, map[string]any{"classification": map[string]any{"name": "Contract",
		"attributes": map[string]any{"optional": []any{map[string]any{"attributeKey": "amount"}}}}}, http.StatusOK)
	e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "inv-1.txt", "content": "invoice", "contentType": "text/plain",
		"attributes": []any{map[string]any{"classificationId": inv}, map[string]any{"key": "invoiceNumber", "stringValue": "n1"}}}, http.StatusCreated)

	row := func(name string) string { return `#class-list tr[data-name="` + name + `"]` }
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("dora", password)...)
	steps = append(steps,
		step{"the tab lists the document types", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/attributes"),
			click(`nav.tabs a[href="#/admin/schemas"]`), textOf("#schemas-title", "Document types"),
			textOf(row("Invoice")+" td:nth-child(2)", "invoiceNumber"), textOf(row("Contract")+" td:nth-child(2)", "—"), textOf(row("Contract")+" td:nth-child(3)", "amount"),
			noRawText(), axeAll(src, "document types"), shot("admin-schemas")}},
		step{"create one with the keyboard", chromedp.Tasks{tabTo("class-new-name"), chromedp.KeyEvent("Letter"), chromedp.KeyEvent(kb.Enter),
			textOf("#class-edit-title", "New document type Letter"), wait(`document.activeElement.id === "class-edit-name"`),
			click("#class-edit-form button[type=submit]"), textOf("#status", "Choose at least one attribute the document type asks for"), absent(row("Letter"))}},
		step{"choose what it asks for", chromedp.Tasks{setValue("#class-attr-amount-where", "required"),
			setValue("#class-attr-invoiceNumber-where", "optional"),
			js(`document.getElementById("class-attr-invoiceNumber-where").dispatchEvent(new Event("change")), true`, nil),
			visible("#class-attr-invoiceNumber-allowed"), setValue("#class-attr-invoiceNumber-allowed", "A-1\nB-2"),
			axeAll(src, "document type edit"), shot("admin-schemas-edit"),
			click("#class-edit-form button[type=submit]"), textOf("#status", "Document type Letter created."),
			textOf(row("Letter")+" td:nth-child(2)", "amount"), textOf(row("Letter")+" td:nth-child(3)", "invoiceNumber")}},
		step{"the API has it", check(func() error {
			r := e.s.Do("GET", base+"?limit=100", nil, e.admin)
			if !strings.Contains(string(r.Body), `"Letter"`) {
				return fmt.Errorf("classifications: %s", r.Body)
			}
			return nil
		})},
		step{"rename Invoice, keeping what it requires", chromedp.Tasks{click(row("Invoice") + " button.edit"),
			wait(`document.getElementById("class-attr-invoiceNumber-where").value === "required"`),
			setValue("#class-edit-name", "Invoices"), click("#class-edit-form button[type=submit]"),
			textOf("#status", "Document type Invoices saved."), textOf(row("Invoices")+" td:nth-child(2)", "invoiceNumber")}},
		step{"a name taken already", chromedp.Tasks{click(row("Letter") + " button.edit"), setValue("#class-edit-name", "Contract"),
			click("#class-edit-form button[type=submit]"), textOf("#status", "That name is taken already."), noRawText(),
			click(`#class-edit-form button[type=button]`), absent("#class-edit-form")}},
		step{"delete asks, and Escape keeps it", chromedp.Tasks{click(row("Contract") + " button.remove"),
			visible("#class-delete"), textOf("#class-delete-title", "Delete the document type Contract?"),
			axeAll(src, "delete document type"), shot("admin-schemas-delete"), chromedp.KeyEvent(kb.Escape),
			absent("#class-delete"), textOf(row("Contract"), "Contract")}},
		step{"delete it", chromedp.Tasks{click(row("Contract") + " button.remove"), click(`#class-delete button[data-choice="delete"]`),
			textOf("#status", "Document type Contract deleted."), absent(row("Contract"))}},
		step{"a type documents use is kept, said plainly", chromedp.Tasks{click(row("Invoices") + " button.remove"), click(`#class-delete button[data-choice="delete"]`),
			textOf("#status", "Invoices was not deleted: documents or a mapping still use it."), noRawText(), textOf(row("Invoices"), "Invoices")}},
		step{"German", chromedp.Tasks{setLang("de"), textOf("#schemas-title", "Dokumentarten"), textOf("#class-list thead", "Verlangt"),
			noRawText(), axeAll(src, "document types de")}},
		step{"French", chromedp.Tasks{setLang("fr"), textOf("#schemas-title", "Types de document"), axeAll(src, "document types fr"), setLang("en")}},
		step{"on a phone", chromedp.Tasks{viewport(390, 844), navigate(e.s.URL + "/console/#/admin/schemas"),
			textOf(row("Letter"), "Letter"), noSideways("phone document types"), axeAll(src, "phone document types"), shot("phone-schemas"), viewport(1280, 900)}},
	)
	b.run(steps...)
}

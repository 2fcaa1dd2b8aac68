package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"quire/pipeline/ocr"
	"quire/storage"
)

// Default processing (issue 46): every new document and new content
// version whose request names no actions gets its site's default actions
// (processing.defaultActions; by default OCR then FULLTEXT). Storage
// decides them by the content type once it is known (storage's
// settleDefault): OCR only for images and PDFs, FULLTEXT of text content
// recorded COMPLETE in the write's transaction. OCR reads a PDF's own text
// where every page has some. Content type detection is not an action: a
// document's actions wait until its type is known (storage's detect
// queue) whatever they are.
//
// The doors that create documents or content set their command's
// DefaultActions flag (storage.NewDocument, UpdateDocument, CommitContent,
// VersionRef) when their request names none: the applier adds the site's
// default actions in the command's transaction (storage/defaultactions.go).
// CheckProcessing is the site configuration's validation of the section.

// DefaultActionChoices are the action types a site may make default: those
// that need no parameters and act on the document alone.
var DefaultActionChoices = []string{"OCR", "FULLTEXT", "CHECKSUM", "ANTIVIRUS", "MALWARE_SCAN"}

// DefaultActions returns the actions a new document or content version of
// a site with configuration c gets when its request names none (PENDING,
// by user). A door does not add them itself: it sets its command's
// DefaultActions flag, and storage adds these in the transaction.
func DefaultActions(c *storage.SiteConfig, user string) []storage.Action {
	return storage.DefaultActionsOf(c, user)
}

// checkLanguageList checks OCR languages given under key (a site's
// processing.languages, an action's ocrLanguages): ocr.LanguageProblems,
// as validation items.
func checkLanguageList(ctx context.Context, key string, langs []string, installed func(context.Context) ([]string, error)) []storage.ValidationItem {
	var items []storage.ValidationItem
	for _, msg := range ocr.LanguageProblems(ctx, langs, installed) {
		items = append(items, storage.ValidationItem{Key: key, Msg: msg})
	}
	return items
}

// InstalledOCRLanguages lists the languages the configured tesseract has
// (its --list-langs, osd among them), within 30 s.
func (p *Pipeline) InstalledOCRLanguages(ctx context.Context) ([]string, error) {
	return p.ocr.InstalledLanguages(ctx)
}

// SiteOCRLanguages returns the languages a site's scans are read in: its
// processing.languages, or, when it chose none, those of
// storage.DefaultOCRLanguages tesseract has, in that order (English alone
// when it has none of them: the OCR then says which package is missing).
func (p *Pipeline) SiteOCRLanguages(ctx context.Context, c *storage.SiteConfig) ([]string, error) {
	langs, set := c.OCRLanguages()
	if set {
		return langs, nil
	}
	return p.ocr.Available(ctx, langs)
}

// CheckProcessing validates a site's processing section: languages are
// tesseract codes the server has (not osd, which is no language), at most
// ocr.MaxLanguages of them, each once; default actions are among
// DefaultActionChoices, each once. Its items use the configuration's keys.
func (p *Pipeline) CheckProcessing(ctx context.Context, c *storage.ProcessingConfig) []storage.ValidationItem {
	if c == nil {
		return nil
	}
	items := checkLanguageList(ctx, "processing.languages", c.Languages, p.InstalledOCRLanguages)
	add := func(key, msg string) { items = append(items, storage.ValidationItem{Key: key, Msg: msg}) }
	if c.DefaultActions != nil {
		for i, t := range *c.DefaultActions {
			switch {
			case !slices.Contains(DefaultActionChoices, t):
				add("processing.defaultActions", fmt.Sprintf("'%s' cannot be a default action: one of %s", t, strings.Join(DefaultActionChoices, ", ")))
			case slices.Contains((*c.DefaultActions)[:i], t):
				add("processing.defaultActions", fmt.Sprintf("'%s' is listed twice", t))
			}
		}
	}
	return items
}

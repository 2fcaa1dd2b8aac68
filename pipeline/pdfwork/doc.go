// Package pdfwork is the PDF and image work the server asks for while it
// serves a request, not as an action: watermarks stamped on a download
// (PDFs through qpdf, PNG and JPEG in Go: watermark.go,
// watermark_image.go), a signed copy with its signature page (sigpage.go),
// what a PDF holds (examine.go), and documents generated from DOCX and ODT
// templates, rendered to PDF by LibreOffice (generate.go). Each runs in a
// scratch directory of its own under the directory it is given, its
// programs through engine, a bounded number at a time; its output is a
// temporary file, removed when closed.
package pdfwork

import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { HighlightStyle, StreamLanguage, syntaxHighlighting } from "@codemirror/language";
import { shell } from "@codemirror/legacy-modes/mode/shell";
import { EditorState } from "@codemirror/state";
import { EditorView, keymap, lineNumbers, placeholder } from "@codemirror/view";
import { tags } from "@lezer/highlight";

// The steps editor's CodeMirror 6, in a chunk of its own (./steps-editor.tsx imports it when the form
// is shown). Shell highlighting from CodeMirror's legacy shell mode, coloured with the file viewer's
// token classes (app/globals.css: .hljs-*), so both themes get the colours already checked for
// contrast there; the editor's own colours are the console's CSS variables, so dark mode follows the
// page. Tab is left to the browser (no indentWithTab): keyboard users tab in and out of the editor.

const highlight = HighlightStyle.define([
  { tag: tags.comment, class: "hljs-comment" },
  { tag: [tags.keyword, tags.controlKeyword], class: "hljs-keyword" },
  { tag: [tags.string, tags.special(tags.string)], class: "hljs-string" },
  { tag: [tags.number, tags.bool, tags.null], class: "hljs-number" },
  {
    tag: [tags.variableName, tags.definition(tags.variableName), tags.standard(tags.variableName), tags.attributeName],
    class: "hljs-built_in",
  },
  { tag: tags.operator, class: "hljs-meta" },
]);

const theme = EditorView.theme({
  "&": {
    backgroundColor: "var(--background)",
    color: "var(--foreground)",
    fontSize: "0.8125rem",
    borderRadius: "calc(var(--radius) - 2px)",
    border: "1px solid var(--input)",
  },
  "&.cm-focused": { outline: "2px solid var(--ring)", outlineOffset: "2px" },
  ".cm-content": {
    fontFamily: "var(--font-mono, ui-monospace, SFMono-Regular, Menlo, monospace)",
    minHeight: "8rem",
    caretColor: "var(--foreground)",
  },
  ".cm-gutters": {
    backgroundColor: "var(--muted)",
    color: "var(--muted-foreground)",
    borderRight: "1px solid var(--border)",
  },
  ".cm-cursor": { borderLeftColor: "var(--foreground)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": {
    backgroundColor: "color-mix(in oklch, var(--primary) 25%, transparent)",
  },
  ".cm-placeholder": { color: "var(--muted-foreground)" },
});

export interface MountOptions {
  parent: HTMLElement;
  value: string;
  onChange: (value: string) => void;
  /** The editor's accessible name and description, by the ids of the label and hint. */
  attributes: Record<string, string>;
  placeholderText: string;
}

export function mountStepsEditor({ parent, value, onChange, attributes, placeholderText }: MountOptions): EditorView {
  return new EditorView({
    parent,
    state: EditorState.create({
      doc: value,
      extensions: [
        lineNumbers(),
        history(),
        keymap.of([...defaultKeymap, ...historyKeymap]),
        StreamLanguage.define(shell),
        syntaxHighlighting(highlight),
        EditorView.lineWrapping,
        placeholder(placeholderText),
        theme,
        EditorView.contentAttributes.of({
          ...attributes,
          spellcheck: "false",
          autocorrect: "off",
          autocapitalize: "off",
        }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) onChange(u.state.doc.toString());
        }),
      ],
    }),
  });
}

/** Replaces the editor's text when the form changed it from outside (a reset), keeping it otherwise. */
export function syncValue(view: EditorView, value: string): void {
  if (view.state.doc.toString() === value) return;
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: value } });
}

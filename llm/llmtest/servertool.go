package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// This file scripts Anthropic's server-side web search: the model's
// server_tool_use block, the web_search_tool_result the API puts after it,
// and text citing a result. On the OpenAI protocol, which has no server
// tools, the search blocks are left out and cited text is plain text.

// SearchHit is one result of a scripted web search.
type SearchHit struct {
	URL     string
	Title   string
	PageAge string
}

// WebSearch returns a turn in which the model searches the web for query
// on the provider's side and gets hits. Add the answer with WithText or
// WithCitedText.
func WebSearch(query string, hits ...SearchHit) Turn { return Turn{}.WithWebSearch(query, hits...) }

// WithWebSearch returns t with a server_tool_use block calling web_search
// with query, then the web_search_tool_result block answering it with hits.
// The server tool use id is "srvtoolu_llmtest_<request seq>_<block index>".
func (t Turn) WithWebSearch(query string, hits ...SearchHit) Turn {
	content := make([]map[string]any, 0, len(hits))
	for _, h := range hits {
		r := map[string]any{"type": "web_search_result", "url": h.URL, "title": h.Title, "encrypted_content": encrypted(h.URL)}
		if h.PageAge != "" {
			r["page_age"] = h.PageAge
		}
		content = append(content, r)
	}
	return t.withSearch(query, mustJSON(content))
}

// WithWebSearchError returns t with a web search whose result is an error
// with code (for example "max_uses_exceeded" or "too_many_requests").
func (t Turn) WithWebSearchError(query, code string) Turn {
	return t.withSearch(query, mustJSON(map[string]any{"type": "web_search_tool_result_error", "error_code": code}))
}

func (t Turn) withSearch(query string, content []byte) Turn {
	parts := clone(t.parts)
	parts = append(parts,
		part{kind: partServerToolUse, name: "web_search", input: string(mustJSON(map[string]any{"query": query}))},
		part{kind: partWebSearchResult, text: string(content)})
	t.parts = parts
	return t
}

// WithCitedText returns t with a text block citing hits: each citation is
// a web_search_result_location sent as a citations_delta before the text.
func (t Turn) WithCitedText(s string, cites ...SearchHit) Turn {
	p := part{kind: partText, text: s}
	for _, c := range cites {
		p.citations = append(p.citations, string(mustJSON(map[string]any{
			"type": "web_search_result_location", "url": c.URL, "title": c.Title,
			"encrypted_index": encrypted(c.URL + "#" + s), "cited_text": s,
		})))
	}
	t.parts = append(clone(t.parts), p)
	return t
}

// encrypted stands in for the opaque encrypted fields of search results:
// deterministic bytes a client must send back unchanged.
func encrypted(s string) string { return base64.StdEncoding.EncodeToString([]byte("llmtest:" + s)) }

// serverToolIDs assigns the ids of server tool uses and points each
// search result at the server tool use before it.
func serverToolIDs(parts []part, seq int) {
	last := ""
	for i := range parts {
		switch p := &parts[i]; p.kind {
		case partServerToolUse:
			if p.id == "" {
				p.id = fmt.Sprintf("srvtoolu_llmtest_%d_%d", seq, i)
			}
			last = p.id
		case partWebSearchResult:
			p.id = last
		}
	}
}

// webSearchResultJSON renders a web_search_tool_result block.
func webSearchResultJSON(p part) map[string]any {
	return map[string]any{"type": "web_search_tool_result", "tool_use_id": p.id, "content": json.RawMessage(p.text)}
}

// citationsJSON renders a text part's citations as a JSON array.
func citationsJSON(p part) json.RawMessage {
	if len(p.citations) == 0 {
		return nil
	}
	raws := make([]json.RawMessage, len(p.citations))
	for i, c := range p.citations {
		raws[i] = json.RawMessage(c)
	}
	return mustJSON(raws)
}

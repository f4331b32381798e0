package guest

import (
	"encoding/json"
	"fmt"
)

// Content types, the values of Content.Type.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResource     = "resource"      // an embedded resource
	ContentResourceLink = "resource_link" // a link to a resource
)

// Content is one MCP content block of a tool result, a prompt message or a
// sampling message. Type selects which other fields are meaningful:
//
//   - "text": Text
//   - "image", "audio": Data (raw bytes; base64 on the wire) and MimeType
//   - "resource": Resource (an embedded resource)
//   - "resource_link": URI, Name and optionally Title, Description, MimeType, Size
//
// Build blocks with Text, Image, Audio, EmbeddedResource and ResourceLink.
type Content struct {
	Type        string
	Text        string
	Data        []byte
	MimeType    string
	Resource    *ResourceContents
	URI         string
	Name        string
	Title       string
	Description string
	Size        int64
	Annotations *ContentAnnotations
	Meta        map[string]any
}

// ContentAnnotations are MCP annotations of a content block or resource.
type ContentAnnotations struct {
	Audience     []string `json:"audience,omitempty"`     // "user", "assistant"
	Priority     *float64 `json:"priority,omitempty"`     // 0 (least) to 1 (most important)
	LastModified string   `json:"lastModified,omitempty"` // ISO 8601 timestamp
}

// Text returns a text content block.
func Text(text string) Content { return Content{Type: ContentText, Text: text} }

// Image returns an image content block; data is the raw image.
func Image(data []byte, mimeType string) Content {
	return Content{Type: ContentImage, Data: data, MimeType: mimeType}
}

// Audio returns an audio content block; data is the raw audio.
func Audio(data []byte, mimeType string) Content {
	return Content{Type: ContentAudio, Data: data, MimeType: mimeType}
}

// EmbeddedResource returns a content block embedding the resource contents.
func EmbeddedResource(rc ResourceContents) Content {
	return Content{Type: ContentResource, Resource: &rc}
}

// ResourceLink returns a content block linking to the resource r (its URI,
// Name, Title, Description, MimeType and Size are copied).
func ResourceLink(r Resource) Content {
	return Content{Type: ContentResourceLink, URI: r.URI, Name: r.Name, Title: r.Title,
		Description: r.Description, MimeType: r.MimeType, Size: r.Size}
}

// MarshalJSON writes the MCP form of the block for its Type.
func (c Content) MarshalJSON() ([]byte, error) {
	m := object{{"type", c.Type}}
	switch c.Type {
	case ContentText:
		m = append(m, field{"text", c.Text})
	case ContentImage, ContentAudio:
		data := c.Data
		if data == nil {
			data = []byte{}
		}
		m = append(m, field{"data", data}, field{"mimeType", c.MimeType})
	case ContentResource:
		if c.Resource == nil {
			return nil, fmt.Errorf("guest: resource content block without Resource")
		}
		m = append(m, field{"resource", c.Resource})
	case ContentResourceLink:
		m = append(m, field{"uri", c.URI}, field{"name", c.Name})
		m = m.putString("title", c.Title).putString("description", c.Description).putString("mimeType", c.MimeType)
		if c.Size > 0 {
			m = append(m, field{"size", c.Size})
		}
	default:
		return nil, fmt.Errorf("guest: unknown content type %q", c.Type)
	}
	if c.Annotations != nil {
		m = append(m, field{"annotations", c.Annotations})
	}
	if len(c.Meta) > 0 {
		m = append(m, field{"_meta", c.Meta})
	}
	return m.MarshalJSON()
}

// UnmarshalJSON reads any MCP content block.
func (c *Content) UnmarshalJSON(b []byte) error {
	var w struct {
		Type        string              `json:"type"`
		Text        string              `json:"text"`
		Data        []byte              `json:"data"`
		MimeType    string              `json:"mimeType"`
		Resource    *ResourceContents   `json:"resource"`
		URI         string              `json:"uri"`
		Name        string              `json:"name"`
		Title       string              `json:"title"`
		Description string              `json:"description"`
		Size        int64               `json:"size"`
		Annotations *ContentAnnotations `json:"annotations"`
		Meta        map[string]any      `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = Content(w)
	return nil
}

// object is a JSON object with its keys in a fixed order.
type object []field

type field struct {
	k string
	v any
}

func (o object) putString(k, v string) object {
	if v != "" {
		o = append(o, field{k, v})
	}
	return o
}

// MarshalJSON writes the fields in order.
func (o object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range o {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := marshal(f.k)
		vb, err := marshal(f.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return append(b, '}'), nil
}

// ResourceContents is the contents of one resource, as answered by a
// resource handler or embedded in a content block. Exactly one of Text and
// Blob is sent: Blob when it is non-nil (base64 on the wire), Text otherwise.
// A resource handler may leave URI and MimeType empty: the SDK fills in the
// requested URI and the resource's or template's MIME type.
type ResourceContents struct {
	URI      string
	MimeType string
	Text     string
	Blob     []byte
	Meta     map[string]any
}

// MarshalJSON writes the MCP TextResourceContents or BlobResourceContents.
func (rc ResourceContents) MarshalJSON() ([]byte, error) {
	m := object{{"uri", rc.URI}}.putString("mimeType", rc.MimeType)
	if rc.Blob != nil {
		m = append(m, field{"blob", rc.Blob})
	} else {
		m = append(m, field{"text", rc.Text})
	}
	if len(rc.Meta) > 0 {
		m = append(m, field{"_meta", rc.Meta})
	}
	return m.MarshalJSON()
}

// UnmarshalJSON reads MCP text or blob resource contents.
func (rc *ResourceContents) UnmarshalJSON(b []byte) error {
	var w struct {
		URI      string         `json:"uri"`
		MimeType string         `json:"mimeType"`
		Text     string         `json:"text"`
		Blob     []byte         `json:"blob"`
		Meta     map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*rc = ResourceContents(w)
	return nil
}

package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// A validator for the subset of XML Schema 1.0 that testdata/junit/junit.xsd
// uses, because Go has no XSD validator: global and local xs:element (name,
// ref, type, minOccurs, maxOccurs, inline xs:complexType), named and inline
// xs:complexType with xs:sequence / xs:choice (nested, with occurrence
// bounds), xs:attribute (type, use="required"), xs:simpleContent /
// xs:extension of a simple type, and the simple types xs:string,
// xs:decimal, xs:int, xs:nonNegativeInteger, xs:boolean and xs:dateTime.
// Anything else in a schema is an error, so the schema cannot silently grow
// past what is checked. Element content is matched greedily, which is
// exact for deterministic content models (XSD's Unique Particle
// Attribution rule requires them).

const xsdNS = "http://www.w3.org/2001/XMLSchema"

type xnode struct {
	space, name string
	attrs       map[string]string
	children    []*xnode
	text        string
}

func parseXMLTree(r io.Reader) (*xnode, error) {
	dec := xml.NewDecoder(r)
	var stack []*xnode
	var root *xnode
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &xnode{space: t.Name.Space, name: t.Name.Local, attrs: map[string]string{}}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || a.Name.Local == "xmlns" {
					continue
				}
				n.attrs[a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(t)
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("no root element")
	}
	return root, nil
}

type xsdSchema struct {
	elements map[string]*xnode
	types    map[string]*xnode
}

func loadXSD(r io.Reader) (*xsdSchema, error) {
	root, err := parseXMLTree(r)
	if err != nil {
		return nil, err
	}
	if root.space != xsdNS || root.name != "schema" {
		return nil, fmt.Errorf("not an XML schema: <%s>", root.name)
	}
	s := &xsdSchema{elements: map[string]*xnode{}, types: map[string]*xnode{}}
	for _, c := range root.children {
		if err := checkXSDNode(c); err != nil {
			return nil, err
		}
		switch c.name {
		case "element":
			s.elements[c.attrs["name"]] = c
		case "complexType":
			s.types[c.attrs["name"]] = c
		default:
			return nil, fmt.Errorf("unsupported top-level xs:%s", c.name)
		}
	}
	return s, nil
}

// checkXSDNode refuses schema constructs the validator does not implement.
func checkXSDNode(n *xnode) error {
	allowed := map[string][]string{
		"element":       {"name", "ref", "type", "minOccurs", "maxOccurs"},
		"complexType":   {"name"},
		"sequence":      {"minOccurs", "maxOccurs"},
		"choice":        {"minOccurs", "maxOccurs"},
		"attribute":     {"name", "type", "use"},
		"simpleContent": {},
		"extension":     {"base"},
		"annotation":    {},
		"documentation": {},
	}
	names, ok := allowed[n.name]
	if n.space != xsdNS || !ok {
		return fmt.Errorf("unsupported schema construct <%s>", n.name)
	}
	for a := range n.attrs {
		found := false
		for _, x := range names {
			found = found || x == a
		}
		if !found {
			return fmt.Errorf("unsupported attribute %s on xs:%s", a, n.name)
		}
	}
	if n.name == "documentation" {
		return nil
	}
	for _, c := range n.children {
		if err := checkXSDNode(c); err != nil {
			return err
		}
	}
	return nil
}

// validate checks a document against the schema.
func (s *xsdSchema) validate(r io.Reader) error {
	doc, err := parseXMLTree(r)
	if err != nil {
		return err
	}
	decl, ok := s.elements[doc.name]
	if !ok {
		return fmt.Errorf("root element <%s> is not declared", doc.name)
	}
	return s.element(decl, doc, "/"+doc.name)
}

func (s *xsdSchema) element(decl, n *xnode, path string) error {
	if typ, ok := decl.attrs["type"]; ok {
		if simple, ok := strings.CutPrefix(typ, "xs:"); ok {
			if len(n.children) > 0 {
				return fmt.Errorf("%s: <%s> is text-only, has child <%s>", path, n.name, n.children[0].name)
			}
			return checkSimple(simple, n.text, path)
		}
		ct, ok := s.types[typ]
		if !ok {
			return fmt.Errorf("schema: unknown type %s", typ)
		}
		return s.complex(ct, n, path)
	}
	for _, c := range decl.children {
		if c.name == "complexType" {
			return s.complex(c, n, path)
		}
	}
	return nil // no type: anything goes (xs:anyType)
}

func (s *xsdSchema) complex(ct, n *xnode, path string) error {
	attrs := map[string]*xnode{}
	var model *xnode
	simpleBase := ""
	for _, c := range ct.children {
		switch c.name {
		case "attribute":
			attrs[c.attrs["name"]] = c
		case "sequence", "choice":
			model = c
		case "simpleContent":
			for _, ext := range c.children {
				simpleBase = strings.TrimPrefix(ext.attrs["base"], "xs:")
				for _, a := range ext.children {
					attrs[a.attrs["name"]] = a
				}
			}
		}
	}
	for name, value := range n.attrs {
		decl, ok := attrs[name]
		if !ok {
			return fmt.Errorf("%s: attribute %s is not allowed", path, name)
		}
		if err := checkSimple(strings.TrimPrefix(decl.attrs["type"], "xs:"), value, path+"/@"+name); err != nil {
			return err
		}
	}
	for name, decl := range attrs {
		if _, ok := n.attrs[name]; !ok && decl.attrs["use"] == "required" {
			return fmt.Errorf("%s: required attribute %s is missing", path, name)
		}
	}
	if simpleBase != "" {
		if len(n.children) > 0 {
			return fmt.Errorf("%s: <%s> is text-only, has child <%s>", path, n.name, n.children[0].name)
		}
		return checkSimple(simpleBase, n.text, path)
	}
	if strings.TrimSpace(n.text) != "" {
		return fmt.Errorf("%s: text %q is not allowed in element-only content", path, strings.TrimSpace(n.text))
	}
	i := 0
	if model != nil {
		var err error
		if i, err = s.match(model, n.children, 0, path); err != nil {
			return err
		}
	}
	if i < len(n.children) {
		return fmt.Errorf("%s: unexpected element <%s> (child %d)", path, n.children[i].name, i+1)
	}
	return nil
}

func occurs(p *xnode) (min, max int) {
	min, max = 1, 1
	if v, ok := p.attrs["minOccurs"]; ok {
		min, _ = strconv.Atoi(v)
	}
	if v, ok := p.attrs["maxOccurs"]; ok {
		if v == "unbounded" {
			max = -1
		} else {
			max, _ = strconv.Atoi(v)
		}
	}
	return min, max
}

// match matches a particle with its occurrence bounds against kids from
// index i; it returns the index after what it consumed.
func (s *xsdSchema) match(p *xnode, kids []*xnode, i int, path string) (int, error) {
	min, max := occurs(p)
	count := 0
	for max < 0 || count < max {
		j, ok, err := s.matchOnce(p, kids, i, path)
		if err != nil {
			return i, err
		}
		if !ok || j == i {
			break
		}
		i = j
		count++
	}
	if count < min {
		return i, fmt.Errorf("%s: expected %s at child %d", path, describeParticle(p), i+1)
	}
	return i, nil
}

func (s *xsdSchema) matchOnce(p *xnode, kids []*xnode, i int, path string) (int, bool, error) {
	switch p.name {
	case "element":
		decl := p
		name := p.attrs["name"]
		if ref, ok := p.attrs["ref"]; ok {
			name, decl = ref, s.elements[ref]
			if decl == nil {
				return i, false, fmt.Errorf("schema: unknown element ref %s", ref)
			}
		}
		if i >= len(kids) || kids[i].name != name {
			return i, false, nil
		}
		return i + 1, true, s.element(decl, kids[i], fmt.Sprintf("%s/%s[%d]", path, name, i+1))
	case "sequence":
		j := i
		for _, c := range p.children {
			var err error
			if j, err = s.match(c, kids, j, path); err != nil {
				if j == i {
					return i, false, nil
				}
				return i, false, err
			}
		}
		return j, true, nil
	case "choice":
		for _, c := range p.children {
			j, ok, err := s.matchOnce(c, kids, i, path)
			if err != nil {
				return i, false, err
			}
			if ok {
				return j, true, nil
			}
		}
		return i, false, nil
	}
	return i, false, fmt.Errorf("schema: unsupported particle xs:%s", p.name)
}

func describeParticle(p *xnode) string {
	if p.name == "element" {
		if ref, ok := p.attrs["ref"]; ok {
			return "<" + ref + ">"
		}
		return "<" + p.attrs["name"] + ">"
	}
	var parts []string
	for _, c := range p.children {
		parts = append(parts, describeParticle(c))
	}
	return p.name + "(" + strings.Join(parts, ", ") + ")"
}

var simpleTypes = map[string]*regexp.Regexp{
	"string":             regexp.MustCompile(`(?s)^.*$`),
	"decimal":            regexp.MustCompile(`^\s*[+-]?(\d+(\.\d*)?|\.\d+)\s*$`),
	"int":                regexp.MustCompile(`^\s*[+-]?\d+\s*$`),
	"nonNegativeInteger": regexp.MustCompile(`^\s*\+?\d+\s*$`),
	"boolean":            regexp.MustCompile(`^\s*(true|false|1|0)\s*$`),
	"dateTime":           regexp.MustCompile(`^\s*-?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?\s*$`),
}

func checkSimple(typ, value, path string) error {
	re, ok := simpleTypes[typ]
	if !ok {
		return fmt.Errorf("schema: unsupported simple type xs:%s", typ)
	}
	if !re.MatchString(value) {
		return fmt.Errorf("%s: %q is not a valid xs:%s", path, value, typ)
	}
	if typ == "int" {
		if _, err := strconv.ParseInt(strings.TrimSpace(value), 10, 32); err != nil {
			return fmt.Errorf("%s: %q is not a valid xs:int", path, value)
		}
	}
	return nil
}

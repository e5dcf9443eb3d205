package delegate

// cost adds up the dollars of model calls; one call of a model without a
// price makes the whole sum unknown.
type cost struct {
	total   float64
	unknown bool
}

func (c *cost) add(usd float64, ok bool) {
	c.total += usd
	c.unknown = c.unknown || !ok
}

// usd is the sum, nil when unknown.
func (c cost) usd() *float64 {
	if c.unknown {
		return nil
	}
	v := c.total
	return &v
}

// treeCost is env's own cost plus every child's whole subtree. A child that
// made no model call (refused before it ran) costs nothing; one whose cost
// is unknown makes the tree's unknown.
func treeCost(env *Envelope) *float64 {
	var c cost
	add := func(usd *float64, tokens int64) {
		switch {
		case usd != nil:
			c.add(*usd, true)
		case tokens > 0:
			c.add(0, false)
		}
	}
	add(env.OwnCostUSD, env.Usage.Total())
	for _, ch := range env.Children {
		add(ch.CostUSD, ch.TreeUsage.Total())
	}
	return c.usd()
}

package serve

import "time"

// timeNow is time.Now, replaced by tests of expiry.
var timeNow = time.Now

package pipeline

// ScaleImage is scaleImage, for the external thumbnail tests.
var ScaleImage = scaleImage

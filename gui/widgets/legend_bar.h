// A row of colour swatches naming the activity categories.
#pragma once

#include <QWidget>

namespace hvdview {

class LegendBar : public QWidget {
  Q_OBJECT

 public:
  explicit LegendBar(QWidget* parent = nullptr);
};

}  // namespace hvdview
